// The flags of a schedule search (--search, --preemption-bound, --seed,
// --pct-depth, --max-schedules), shared by `schedules` and `compare` so
// that each means the same search in both: `compare --variant X` on a
// threaded scenario searches what `schedules --variant X` searches.
#pragma once

#include <string>

#include "cli.h"
#include "impsim/engine/schedule_search.h"
#include "impsim/report/schedule_gate.h"

namespace impsim::cli {

struct SearchFlags {
  std::string search = "exhaustive";
  int preemption_bound = 2;
  uint64_t seed = 0;
  int pct_depth = 3;
  uint64_t max_schedules = 10000;
  std::string fail_on = "all";  // report/schedule_gate.h

  // Registers the flags on `cmd`; `applies` ends each help line where the
  // command also takes scenarios without threads (compare), else empty.
  void add(CLI::App* cmd, const std::string& applies = "");
  // The search the flags ask for (one shard: the whole of it).
  SearchOptions options() const;
  // --fail-on, read (the flag's check has refused anything else).
  FailOn fail_on_kinds() const;
  // The flags given on the command line ("--seed"), for a command that
  // refuses them on a scenario they mean nothing for.
  std::vector<std::string> given(const CLI::App* cmd) const;
};

}  // namespace impsim::cli
