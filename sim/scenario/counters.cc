#include "impsim/scenario/counters.h"

#include <stdexcept>

namespace impsim {

std::vector<const CounterInfo*> counters_of_groups(unsigned groups) {
  std::vector<const CounterInfo*> out;
  for (const CounterInfo& c : kCounters)
    if (c.group & groups) out.push_back(&c);
  return out;
}

const CounterInfo* find_counter(std::string_view name) {
  for (const CounterInfo& c : kCounters)
    if (c.name == name) return &c;
  return nullptr;
}

std::string counter_list() {
  std::string out;
  for (size_t i = 0; i < kCounters.size(); ++i) {
    if (i > 0) out += i + 1 == kCounters.size() ? " or " : ", ";
    out += kCounters[i].name;
  }
  return out;
}

const Count& counter_value(const Counters& c, std::string_view name) {
  const CounterInfo* info = find_counter(name);
  if (!info) throw std::invalid_argument("not a counter: " + std::string(name));
  return c.*info->field;
}

}  // namespace impsim
