// Drives ImportLocks (include/impsim/engine/import_locks.h) from standard
// input, for tools/check/lock_model, which runs the same operations on
// each interpreter's own importlib._bootstrap and compares what happened.
//
// Input, one operation a line: `T acquire M` (the module lock of M, as
// `_get_module_lock(M).acquire()`: the global lock first, briefly),
// `T release M`, `T gacquire` (`_imp.acquire_lock()`), `T grelease`;
// `reset` starts a new sequence. Output, one line per operation: what
// changed, thread by thread, sorted, e.g. `0:acquired 1:waiting:module:a`.
// A woken thread retries at once, in the order it began to wait.
#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "impsim/engine/import_locks.h"

namespace {

using impsim::ImportLocks;
using impsim::LockResult;
using impsim::PyThreadId;

struct Driver {
  ImportLocks locks;
  std::map<std::string, int32_t> ids;
  std::vector<std::string> names;
  // What a waiting thread waits for: the global lock (for itself, or inside
  // _get_module_lock(module) before an acquire or a release), or the
  // module lock `module`.
  enum class Then { Hold, Acquire, Release };
  struct Pending {
    bool global;
    int32_t module;
    Then then;
  };
  std::map<PyThreadId, Pending> waiting;
  std::vector<std::string> events;

  int32_t id(const std::string& name) {
    auto [it, added] = ids.emplace(name, static_cast<int32_t>(names.size()));
    if (added) names.push_back(name);
    return it->second;
  }
  void note(PyThreadId t, const std::string& what) { events.push_back(std::to_string(t) + ":" + what); }

  // _ModuleLock.acquire, once _get_module_lock has returned the lock.
  void acquire_module(PyThreadId t, int32_t m) {
    switch (locks.acquire_module_step(t, m)) {
      case LockResult::Acquired:
        note(t, "acquired");
        break;
      case LockResult::Deadlock:
        note(t, "deadlock");
        break;
      case LockResult::Wait:
        waiting[t] = {false, m, Then::Acquire};
        note(t, "waiting:module:" + names[static_cast<size_t>(m)]);
        break;
    }
  }
  void release_module(PyThreadId t, int32_t m) {
    const auto woken = locks.release_module_step(t, m);
    if (!woken) {
      note(t, "error");
      return;
    }
    note(t, "released");
    wake(*woken);
  }
  // _get_module_lock(m) (`_imp.acquire_lock()`, the lookup,
  // `_imp.release_lock()`), then the lock's acquire or release.
  void with_module_lock(PyThreadId t, int32_t m, Then then) {
    if (locks.acquire_global_step(t) == LockResult::Wait) {
      waiting[t] = {true, m, then};
      note(t, "waiting:global");
      return;
    }
    wake(*locks.release_global_step(t));
    if (then == Then::Acquire)
      acquire_module(t, m);
    else
      release_module(t, m);
  }
  void acquire_global(PyThreadId t) {
    if (locks.acquire_global_step(t) == LockResult::Acquired) {
      note(t, "acquired");
    } else {
      waiting[t] = {true, -1, Then::Hold};
      note(t, "waiting:global");
    }
  }
  // Each woken thread retries what it waited for, in the order it began
  // to wait.
  void wake(const std::vector<PyThreadId>& woken) {
    for (PyThreadId w : woken) {
      const Pending p = waiting.at(w);
      waiting.erase(w);
      if (!p.global)
        acquire_module(w, p.module);
      else if (p.then == Then::Hold)
        acquire_global(w);
      else
        with_module_lock(w, p.module, p.then);
    }
  }
  void run(PyThreadId t, const std::string& op, const std::string& name) {
    if (op == "acquire") {
      with_module_lock(t, id(name), Then::Acquire);
    } else if (op == "release") {
      with_module_lock(t, id(name), Then::Release);
    } else if (op == "gacquire") {
      acquire_global(t);
    } else if (op == "grelease") {
      const auto woken = locks.release_global_step(t);
      if (!woken) {
        note(t, "error");
        return;
      }
      note(t, "released");
      wake(*woken);
    } else {
      note(t, "unknown-operation");
    }
  }
};

}  // namespace

int main() {
  Driver d;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "reset") {
      d = Driver{};
      continue;
    }
    std::istringstream in(line);
    PyThreadId t = -1;
    std::string op, name;
    in >> t >> op >> name;
    d.events.clear();
    d.run(t, op, name);
    std::sort(d.events.begin(), d.events.end());
    std::string out;
    for (const std::string& e : d.events) out += (out.empty() ? "" : " ") + e;
    std::cout << out << '\n' << std::flush;
  }
  return 0;
}
