// Everything a Scenario holds, as text (scenario_dump.h).
#include "scenario_dump.h"

#include <fmt/format.h>

namespace impsim::fuzz {

namespace {

std::string dump_steps(const std::vector<Step>& steps, int indent);

std::string dump_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (auto& s : v) out += fmt::format("{:?},", s);
  return out + "]";
}

std::string dump_int(const IntField& f) { return fmt::format("{}|{:?}|{:?}", f.value, f.param, f.pointer); }

std::string dump_step(const Step& s, int indent) {
  const StepDetail& d = s.detail();
  std::string out = fmt::format(
      "{:{}}step kind={} ptr={:?} target={:?} optional={} scope={} guard_enable={} block={} has_blocked={} "
      "repeat={} nest={} label={} finder={:?} at={} all_copies={} unload={} submodules={}\n",
      "", indent, static_cast<int>(s.kind), s.pointer, s.target, s.optional, d.scope ? dump_list(*d.scope) : "none",
      d.guard_enable, dump_list(d.block), d.has_blocked_modules, d.repeat ? dump_int(*d.repeat) : "none",
      d.nest ? dump_int(*d.nest) : "none", s.label, d.finder, d.at, d.all_copies, dump_list(d.unload), d.submodules);
  return out + dump_steps(s.body, indent + 2);
}

std::string dump_steps(const std::vector<Step>& steps, int indent) {
  std::string out;
  for (const Step& s : steps) out += dump_step(s, indent);
  return out;
}

std::string dump_hooks(const HooksText& h) {
  std::string out = fmt::format("hooks used={}\n", h.used);
  for (const HookText& k : h.hooks) {
    out += fmt::format(
        "hook {:?} {:?} claims={} names={} top={} guard={} loader={} attr={:?} toggle={:?} {:?} "
        "install={} uninstall={} legacy={}\n",
        k.name, k.pointer, static_cast<int>(k.claims), dump_list(k.claim_names), k.top_level_only,
        static_cast<int>(k.guard), static_cast<int>(k.loader), k.attribute, k.toggle_finder, k.toggle_pointer,
        static_cast<int>(k.install), static_cast<int>(k.uninstall), k.legacy);
    for (const HookActionText& a : k.actions) {
      out += fmt::format("  action {} {:?} {} {} {} {:?} table=", static_cast<int>(a.kind), a.target,
                         dump_list(a.names), a.submodules, a.package, a.pointer);
      for (auto& [x, y] : a.table) out += fmt::format("{:?}:{:?},", x, y);
      out += "\n";
    }
  }
  for (const FinderText& f : h.finders) out += fmt::format("finder {:?} {:?} {:?}\n", f.id, f.hook, f.pointer);
  out +=
      fmt::format("meta_path {}\nbuiltin {}\n", h.meta_path ? dump_list(*h.meta_path) : "unset", dump_list(h.builtin));
  for (auto* set : {&h.hook_names, &h.hook_finder_ids, &h.renewed_ids})
    out += dump_list(std::vector<std::string>(set->begin(), set->end())) + "\n";
  return out;
}

}  // namespace

std::string scenario_dump(const Scenario& sc) {
  std::string out = fmt::format("file {:?}\nname {:?}\ndescription {:?}\n", sc.file, sc.name, sc.description);
  for (auto& p : sc.param_order) out += fmt::format("param {:?} = {}\n", p, sc.params.at(p));
  out += fmt::format("params {}\n", sc.params.size());
  if (sc.sweep) {
    out += fmt::format("sweep {:?} {:?}", sc.sweep->param, sc.sweep->title);
    for (int64_t v : sc.sweep->values) out += fmt::format(" {}", v);
    out += "\n";
  }
  out += fmt::format("preloaded {}\nfiller {}\ntorch {}\n", dump_list(sc.preloaded), dump_int(sc.filler),
                     dump_list(sc.torch_modules));
  for (const TreeEntry& e : sc.tree) out += fmt::format("entry {:?} {}\n", e.name, e.package) + dump_steps(e.body, 2);
  out += fmt::format("blocked {}\nprogram\n", dump_list(sc.blocked)) + dump_steps(sc.program, 2);
  out += fmt::format("variants {}\n", dump_list(variant_names(sc.variants)));
  for (auto& r : sc.report) out += fmt::format("report {:?} {:?}\n", r.counter, r.title);
  for (const Expectation& e : sc.expect) {
    out += fmt::format("expect {:?} {:?} {:?} listed={}", variant_name(e.variant), e.counter, e.pointer, e.listed);
    for (auto& v : e.values) out += v ? fmt::format(" {}", *v) : " -";
    for (auto& b : e.budgets) out += b ? fmt::format(" [{}]", budget_text(*b)) : " []";
    out += "\n";
  }
  out += fmt::format("labels {}\n", dump_list(sc.labels));
  out += fmt::format("revision {} cpython {} allow_error {} expect_equivalent {}\n",
                     sc.revision ? static_cast<int>(*sc.revision) : -1, sc.cpython ? static_cast<int>(*sc.cpython) : -1,
                     sc.allow_error, sc.expect_equivalent ? static_cast<int>(*sc.expect_equivalent) : -1);
  for (auto& o : sc.expect_outcome)
    out += fmt::format("outcome {:?} {} {:?}\n", variant_name(o.variant), dump_list(o.verdicts), o.pointer);
  return out + dump_hooks(sc.hooks);
}

}  // namespace impsim::fuzz
