// sys.modules as the engine keeps it: an insertion-ordered dict from name to
// module object, with the torch names threaded on a second list so that a
// toggle's walk visits only them while still counting every name it would
// have examined (the filler modules are a bare count). Plus the finder's
// torch cache (TORCH_MODULES_CACHE), also insertion-ordered.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/scenario/names.h"

namespace impsim {

using ModuleId = int32_t;
inline constexpr ModuleId kNoModule = -1;

class SysModules {
 public:
  void reset(const NameTable& names, int64_t filler);

  bool contains(NameId n) const { return module_[n] != kNoModule; }
  ModuleId get(NameId n) const { return module_[n]; }
  // sys.modules[n] = m: replaces in place, or appends.
  void set(NameId n, ModuleId m);
  void erase(NameId n);
  // module = sys.modules.pop(n); sys.modules[n] = module
  void move_to_end(NameId n);
  // len(sys.modules), filler included.
  uint64_t size() const { return count_ + static_cast<uint64_t>(filler_); }
  // How many torch names are in it.
  uint64_t torch_count() const { return torch_count_; }
  // Names in dict order, filler left out.
  std::vector<NameId> names() const;
  // Bumped by every change: equal versions mean an identical dict.
  uint64_t version() const { return version_; }

  // Calls f(name) for each torch name in dict order; f may erase that name.
  template <class F>
  void for_each_torch(F&& f) {
    for (NameId n = torch_head_; n != kNoName;) {
      NameId next = torch_next_[n];
      f(n);
      n = next;
    }
  }

 private:
  void link(NameId n);
  void unlink(NameId n);

  const NameTable* names_ = nullptr;
  int64_t filler_ = 0;
  uint64_t count_ = 0;
  uint64_t torch_count_ = 0;
  uint64_t version_ = 0;
  std::vector<ModuleId> module_;
  std::vector<NameId> prev_, next_, torch_prev_, torch_next_;
  NameId head_ = kNoName, tail_ = kNoName, torch_head_ = kNoName, torch_tail_ = kNoName;
};

class TorchCache {
 public:
  void reset(size_t names) {
    module_.assign(names, kNoModule);
    order_.clear();
  }
  bool contains(NameId n) const { return module_[n] != kNoModule; }
  ModuleId get(NameId n) const { return module_[n]; }
  void set(NameId n, ModuleId m) {
    if (module_[n] == m) return;
    if (module_[n] == kNoModule) order_.push_back(n);
    module_[n] = m;
    ++version_;
  }
  uint64_t version() const { return version_; }
  const std::vector<NameId>& order() const { return order_; }

 private:
  std::vector<ModuleId> module_;
  std::vector<NameId> order_;
  uint64_t version_ = 0;
};

}  // namespace impsim
