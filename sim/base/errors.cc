#include "impsim/base/errors.h"

#include <fmt/format.h>

namespace impsim {

InputError::InputError(std::string file_, SourcePos pos_, std::string pointer_, std::string message_)
    : std::runtime_error(fmt::format("{}{}: {}{}", file_,
                                     pos_.line > 0 ? fmt::format(":{}:{}", pos_.line, pos_.column) : "",
                                     pointer_.empty() ? "" : "at " + pointer_ + ": ", message_)),
      file(std::move(file_)),
      pos(pos_),
      pointer(std::move(pointer_)),
      message(std::move(message_)) {}

InputError::InputError(NoPosition, std::string file_, std::string message_)
    : std::runtime_error(fmt::format("{}: {}", file_, message_)),
      file(std::move(file_)),
      message(std::move(message_)) {}

InputLimitError::InputLimitError(std::string limit_, std::string file_, SourcePos pos_, std::string pointer_,
                                 std::string message_)
    : InputError(std::move(file_), pos_, std::move(pointer_), fmt::format("limit {} reached: {}", limit_, message_)),
      limit(std::move(limit_)) {}

ModelLimitError::ModelLimitError(std::string limit_, std::string pointer_, std::string detail_)
    : std::runtime_error(fmt::format("at {}: limit {} reached: {}", pointer_, limit_, detail_)),
      limit(std::move(limit_)),
      pointer(std::move(pointer_)),
      detail(std::move(detail_)) {}

}  // namespace impsim
