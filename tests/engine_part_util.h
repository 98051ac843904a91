// What the tests of the engine's parts share: an engine on a scenario
// written inline, stopped before the program's first line, so that a test
// calls one part's functions itself instead of running a program; and a
// trace sink that writes down, in order, the events a test asks about.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "impsim/engine/engine.h"
#include "test_util.h"

namespace impsim::test {

class EngineBench {
 public:
  explicit EngineBench(const std::string& json, Variant variant = Variant::Before, EngineLimits limits = {})
      : scenario_(parse_scenario(json, "inline.json")),
        model_(compile_model(scenario_, {})),
        variant_(variant),
        limits_(limits) {}

  // A name set for enable and guard. The engine copies the model's sets
  // when it is made, so every set is interned before the first engine().
  SetId set(std::initializer_list<const char*> names) {
    REQUIRE_FALSE(engine_.has_value());
    std::vector<NameId> ids;
    for (const char* n : names) ids.push_back(name(n));
    return model_.sets.intern(ids);
  }
  // A name the scenario mentions (a name it never does has no id).
  NameId name(const std::string& text) const {
    const NameId id = model_.names.find(text);
    REQUIRE(id != kNoName);
    return id;
  }
  FinderId finder(const std::string& id) const { return model_.hooks.find(id); }
  const Model& model() const { return model_; }
  // The engine, made and set up at the first call.
  Engine& engine() {
    if (!engine_) {
      engine_.emplace(model_, variant_, limits_);
      engine_->set_up();
    }
    return *engine_;
  }
  // sys.meta_path by finder ids ("P", "PathFinder", a hook's).
  std::vector<std::string> meta_path() {
    std::vector<std::string> out;
    for (FinderId f : engine().meta_path().list()) out.push_back(finder_id(engine(), f));
    return out;
  }
  // sys.modules' names in dict order.
  std::vector<std::string> modules() {
    std::vector<std::string> out;
    for (NameId n : engine().sys_modules().names()) out.push_back(model_.names.text(n));
    return out;
  }
  // How many times finder object `id` was called (finder_calls:ID).
  uint64_t calls(const std::string& id) {
    const auto& by = engine().hook_counters().by_object;
    const auto f = static_cast<size_t>(finder(id));
    return f < by.size() ? by[f].u64() : 0;
  }

  static std::string finder_id(const Engine& e, FinderId f) {
    if (f <= kProxyFinder) return kPredefinedFinders[f];
    return e.finder_objects()[static_cast<size_t>(f)].id;
  }

 private:
  Scenario scenario_;
  Model model_;
  Variant variant_;
  EngineLimits limits_;
  std::optional<Engine> engine_;
};

// The exception a simulated Python call raised, or none.
template <class Call>
std::optional<PyError> raised_by(Call&& call) {
  try {
    call();
  } catch (const PyError& e) {
    return e;
  }
  return std::nullopt;
}

// The order of what the import system did: "import X" (_find_and_load_unlocked
// begins), "ask F X" (_find_spec's loop asks finder F), "body X" (a module body
// runs), "loaded X" (an import ends, loaded).
struct EventLog final : TraceSink {
  std::vector<std::string> events;
  void import_begin(const Engine& e, NameId name) override { add("import ", e, name); }
  void import_end(const Engine& e, NameId name, bool ok) override {
    if (ok) add("loaded ", e, name);
  }
  void ask_begin(const Engine& e, NameId name, FinderClass, FinderId finder, int64_t, const MetaPath&) override {
    add("ask " + EngineBench::finder_id(e, finder) + " ", e, name);
  }
  void body_begin(const Engine& e, NameId name, BodyKind) override { add("body ", e, name); }
  // The events that begin with `prefix`, in order.
  std::vector<std::string> only(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const std::string& s : events)
      if (s.rfind(prefix, 0) == 0) out.push_back(s);
    return out;
  }

 private:
  void add(const std::string& what, const Engine& e, NameId name) { events.push_back(what + e.model().names.text(name)); }
};

}  // namespace impsim::test
