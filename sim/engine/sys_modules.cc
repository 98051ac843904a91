#include "impsim/engine/sys_modules.h"

namespace impsim {

void SysModules::reset(const NameTable& names, int64_t filler) {
  names_ = &names;
  filler_ = filler;
  count_ = 0;
  torch_count_ = 0;
  size_t n = names.size();
  module_.assign(n, kNoModule);
  prev_.assign(n, kNoName);
  next_.assign(n, kNoName);
  torch_prev_.assign(n, kNoName);
  torch_next_.assign(n, kNoName);
  head_ = tail_ = torch_head_ = torch_tail_ = kNoName;
}

void SysModules::link(NameId n) {
  prev_[n] = tail_;
  next_[n] = kNoName;
  if (tail_ != kNoName) next_[tail_] = n; else head_ = n;
  tail_ = n;
  if (names_->is_torch(n)) {
    ++torch_count_;
    torch_prev_[n] = torch_tail_;
    torch_next_[n] = kNoName;
    if (torch_tail_ != kNoName) torch_next_[torch_tail_] = n; else torch_head_ = n;
    torch_tail_ = n;
  }
}

void SysModules::unlink(NameId n) {
  if (prev_[n] != kNoName) next_[prev_[n]] = next_[n]; else head_ = next_[n];
  if (next_[n] != kNoName) prev_[next_[n]] = prev_[n]; else tail_ = prev_[n];
  if (names_->is_torch(n)) {
    --torch_count_;
    if (torch_prev_[n] != kNoName) torch_next_[torch_prev_[n]] = torch_next_[n]; else torch_head_ = torch_next_[n];
    if (torch_next_[n] != kNoName) torch_prev_[torch_next_[n]] = torch_prev_[n]; else torch_tail_ = torch_prev_[n];
  }
}

void SysModules::set(NameId n, ModuleId m) {
  if (module_[n] == m) return;  // sys.modules[n] = the same object: nothing changes
  ++version_;
  if (module_[n] == kNoModule) {
    link(n);
    ++count_;
  }
  module_[n] = m;
}

void SysModules::erase(NameId n) {
  if (module_[n] == kNoModule) return;
  ++version_;
  unlink(n);
  module_[n] = kNoModule;
  --count_;
}

void SysModules::move_to_end(NameId n) {
  if (tail_ == n) return;
  ++version_;
  unlink(n);
  link(n);
}

std::vector<NameId> SysModules::names() const {
  std::vector<NameId> out;
  for (NameId n = head_; n != kNoName; n = next_[n]) out.push_back(n);
  return out;
}

}  // namespace impsim
