// PEP 810's lazy imports (lazy_imports.h): the statements that bind lazy
// objects, the reads that resolve them, and what a module's load does for
// them, each as CPython 3.15.0rc1 does it (docs/lazy-imports.md; the rule
// each function follows is named there, and tools/check/lazy_rules checks
// it on the real interpreter).
//
// The reads follow ceval: a name read in a module body (LOAD_NAME) or a
// function (LOAD_GLOBAL) that finds a lazy object resolves it and rebinds
// the global to the result; an attribute read of a module (module getattr)
// does the same in that module's globals, and, for a missing attribute
// whose dotted name is in sys.lazy_modules, imports that submodule there
// (_find_and_load_lazy_submodule: no module found is an AttributeError).
// Resolution is import.c's _PyImport_LoadLazyImportTstate: the object is
// marked as being resolved (a read of it meanwhile is ImportCycleError),
// then the import runs as the eager statement would, now.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "impsim/engine/engine.h"

namespace impsim {

namespace {

std::vector<std::string> parts_of(const std::string& dotted) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t dot = dotted.find('.');; dot = dotted.find('.', from)) {
    parts.push_back(dotted.substr(from, dot == std::string::npos ? dot : dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return parts;
}

// Runs the import a statement or read starts now (`what`: Eager or
// Attribute); a trace hears it inside that event, up to its lazy_end, so
// the search shows under the line of the program that caused it.
template <class Load>
auto traced_import(TraceSink* trace, const Engine& e, LazyEvent what, NameId name, const std::string& read,
                   Load&& load) {
  if (!trace) return load();
  trace->lazy(e, what, name, read);
  return try_finally(load, [&] { trace->lazy_end(e, what); });
}

}  // namespace

ModuleId Engine::current_globals() const {
  return py_thread_.frames.empty() ? kNoModule : py_thread_.frames.back();
}

void Engine::bind(ModuleId globals, const std::string& key, Binding b) { lazy_.globals[globals][key] = b; }

// The filter of sys.set_lazy_imports_filter, asked at the statement (never
// at resolution) with the module's absolute name: False keeps it eager.
bool Engine::filter_keeps_lazy(NameId name) {
  if (!lazy_.has_filter) return true;
  ++lazy_.filter_calls;
  const auto eager = model_.sets.members(lazy_.filter_eager);
  return std::find(eager.begin(), eager.end(), name) == eager.end();
}

// `import a.b` (binds a) or `import a.b as c` (binds c to a.b), eagerly.
void Engine::bind_eager_import(NameId name, NameId as, bool whole) {
  import_statement<AnyRun>(name);
  const NameId value = whole ? name : names_.top(name);
  if (interp_.sys_modules.contains(value))
    bind(current_globals(), names_.text(as), Binding{Binding::Kind::Module, interp_.sys_modules.get(value)});
}

// A statement that binds a lazy object: `lazy import` itself, or `import`
// made lazy by mode "all".
void Engine::bind_lazy(NameId name, NameId as, bool whole) {
  if (book_.trace) book_.trace->lazy(*this, LazyEvent::Bound, name, names_.text(as));
  const auto id = static_cast<LazyId>(lazy_.objects.size());
  lazy_.objects.push_back(LazyObject{name, whole});
  bind(current_globals(), names_.text(as), Binding{Binding::Kind::Lazy, id});
  add_lazy_module(name);
  ++lazy_.statements;
}

void Engine::add_lazy_module(NameId name) {
  if (std::find(lazy_.lazy_modules.begin(), lazy_.lazy_modules.end(), name) == lazy_.lazy_modules.end())
    lazy_.lazy_modules.push_back(name);
}

// `lazy import a.b [as c]`: lazy unless the filter says False.
void Engine::lazy_import_step(const CStep& step) {
  if (filter_keeps_lazy(step.target)) {
    bind_lazy(step.target, step.bind, step.bind_as);
    return;
  }
  traced_import(book_.trace, *this, LazyEvent::Eager, step.target, {},
                [&] { bind_eager_import(step.target, step.bind, step.bind_as); });
}

// `import a.b` in a lazy scenario: under mode "all", or with "a.b" in the
// module's __lazy_modules__, a module-level import outside try/except is
// lazy (the filter asked first); a function's stays eager, as does an
// optional one (try/except).
void Engine::import_step(const CStep& step) {
  const NameId top = names_.top(step.target);
  const bool function = !lazy_.frame_is_call.empty() && lazy_.frame_is_call.back();
  // `name in __lazy_modules__`, the module's own, with the full name.
  auto listed = [&] {
    auto it = lazy_.dunder.find(current_globals());
    if (it == lazy_.dunder.end()) return false;
    const auto& names = model_.sets.members(it->second);
    return std::find(names.begin(), names.end(), step.target) != names.end();
  };
  if ((lazy_.mode_all || listed()) && !step.optional && !function) {
    if (filter_keeps_lazy(step.target)) {
      bind_lazy(step.target, top, false);
      return;
    }
    return traced_import(book_.trace, *this, LazyEvent::Eager, step.target, {},
                         [&] { bind_eager_import(step.target, top, false); });
  }
  bind_eager_import(step.target, top, false);
}

// _PyImport_LoadLazyImportTstate: a read found lazy object `id`.
ModuleId Engine::resolve(LazyId id, const std::string& read) {
  const LazyObject object = lazy_.objects[static_cast<size_t>(id)];
  if (std::find(lazy_.resolving.begin(), lazy_.resolving.end(), id) != lazy_.resolving.end()) {
    if (book_.trace) book_.trace->lazy(*this, LazyEvent::Cycle, object.target, read);
    raise("ImportCycleError",
          fmt::format("cannot import name '{}' (most likely due to a circular import)", names_.text(object.target)));
  }
  ++lazy_.resolutions;
  if (book_.trace)
    book_.trace->lazy(*this, LazyEvent::Resolve, object.whole ? object.target : names_.top(object.target), read);
  lazy_.resolving.push_back(id);
  return try_finally(
      [&] {
        const NameId parent = names_.parent(object.target);
        if (!object.whole || parent == kNoName) {
          const NameId value = names_.top(object.target);
          import_statement<AnyRun>(value);
          if (!interp_.sys_modules.contains(value)) raise("KeyError", "'" + names_.text(value) + "'");
          return interp_.sys_modules.get(value);
        }
        return import_from(parent, object.target);
      },
      [&] {
        lazy_.resolving.erase(std::find(lazy_.resolving.begin(), lazy_.resolving.end(), id));
        if (book_.trace) book_.trace->lazy_end(*this, LazyEvent::Resolve);
      });
}

// `lazy from m import a, b as c`. The filter is asked once, with m. The
// statement adds 'm' and each 'm.a' to sys.lazy_modules (entries a load
// of m.a takes out; an attribute's stay); a name m already has, m being in
// sys.modules, is bound to its value now, any other to a lazy object that
// resolves as `from m import a`.
void Engine::lazy_from_step(const CStep& step) {
  const NameId m = step.target;
  std::vector<NameId> names;
  for (size_t i = 0; i < step.unload.size(); i += 2) names.push_back(step.unload[i]);
  const ModuleId globals = current_globals();
  if (!filter_keeps_lazy(m))
    return traced_import(book_.trace, *this, LazyEvent::Eager, m, {}, [&] {
      const ModuleId from = import_fromlist(m, names);
      for (size_t i = 0; i < step.unload.size(); i += 2)
        bind(globals, names_.text(step.unload[i + 1]),
             Binding{Binding::Kind::Module, import_from_attr(from, step.unload[i])});
    });
  add_lazy_module(m);
  const ModuleId loaded = interp_.sys_modules.contains(m) ? interp_.sys_modules.get(m) : kNoModule;
  // What each name held before: the statement counts as a lazy one when,
  // after it, a name it bound holds a lazy object it did not hold.
  std::vector<std::pair<std::string, std::optional<Binding>>> before;
  for (size_t i = 1; i < step.unload.size(); i += 2) {
    const std::string& as = names_.text(step.unload[i]);
    const auto& mine = lazy_.globals[globals];
    const auto old = mine.find(as);
    before.emplace_back(as, old == mine.end() ? std::nullopt : std::optional<Binding>(old->second));
  }
  for (size_t i = 0; i < step.unload.size(); i += 2) {
    const NameId name = step.unload[i];
    const std::string& as = names_.text(step.unload[i + 1]);
    add_lazy_module(name);
    if (loaded != kNoModule) {
      const std::string& text = names_.text(name);
      const auto& has = lazy_.globals[loaded];
      // The value in m's __dict__, unresolved (a lazy object there is shared).
      if (auto it = has.find(text.substr(text.rfind('.') + 1)); it != has.end()) {
        const Binding value = it->second;
        bind(globals, as, value);
        continue;
      }
    }
    if (book_.trace) book_.trace->lazy(*this, LazyEvent::Bound, name, as);
    const auto id = static_cast<LazyId>(lazy_.objects.size());
    lazy_.objects.push_back(LazyObject{name, true});
    bind(globals, as, Binding{Binding::Kind::Lazy, id});
  }
  const auto& mine = lazy_.globals[globals];
  for (const auto& [as, old] : before) {
    const Binding now = mine.at(as);
    if (now.kind == Binding::Kind::Lazy && !(old && old->kind == Binding::Kind::Lazy && old->id == now.id)) {
      ++lazy_.statements;
      break;
    }
  }
}

namespace {

// The ModuleNotFoundError for `name` itself, which _handle_fromlist and
// _find_and_load_lazy_submodule let pass (a parent that is not a package
// gives the second form; the lazy path returns None for it unsearched, as
// the engine raises it unsearched).
bool no_module_named(const PyError& e, const std::string& name) {
  if (e.type != "ModuleNotFoundError") return false;
  const std::string plain = fmt::format("No module named '{}'", name);
  return e.message == plain || e.message.rfind(plain + "; ", 0) == 0;
}

}  // namespace

// __import__(parent, fromlist=names): the parent imported (found in
// sys.modules, or _find_and_load), then, for a package only, _handle_fromlist: a name that hasattr does not find (a
// getattr, so a lazy attribute is resolved and a name in sys.lazy_modules
// searched) is imported as a submodule, its own ModuleNotFoundError let
// pass. So `from pk import nope`, 'pk.nope' listed, searches three times:
// hasattr, the import, and IMPORT_FROM's getattr (3.15.0rc1 does).
ModuleId Engine::import_fromlist(NameId parent, const std::vector<NameId>& names) {
  // With a fromlist, __import__ returns the module itself: no import of
  // its top package as its own name, which a top package that failed and
  // left a.b behind in sys.modules would otherwise run again.
  const ModuleId from = _find_and_load<AnyRun>(parent);
  if (interp_.records.module(from).path == kNoPath) return from;
  for (NameId name : names) {
    const std::string& text = names_.text(name);
    try {
      load_attr(from, text.substr(text.rfind('.') + 1), text);
      continue;
    } catch (PyError& e) {
      if (e.type != "AttributeError") throw;
    }
    try {
      _find_and_load<AnyRun>(name);
    } catch (PyError& e) {
      if (!no_module_named(e, text)) throw;
    }
  }
  return from;
}

// IMPORT_FROM: getattr, else sys.modules['parent.child'], else ImportError.
ModuleId Engine::import_from_attr(ModuleId from, NameId name) {
  const std::string& text = names_.text(name);
  const std::string child = text.substr(text.rfind('.') + 1);
  try {
    return load_attr(from, child, text);
  } catch (PyError& e) {
    if (e.type != "AttributeError") throw;
  }
  if (interp_.sys_modules.contains(name)) return interp_.sys_modules.get(name);
  raise("ImportError", fmt::format("cannot import name '{}' from '{}'", child, names_.text(names_.parent(name))));
}

// `lazy import a.b.c as x` and `lazy from a.b import c` resolve as `from
// a.b import c`.
ModuleId Engine::import_from(NameId parent, NameId name) {
  return import_from_attr(import_fromlist(parent, {name}), name);
}

// A read of global `key` of `globals` that holds `b`: a lazy object is
// resolved, and the global rebound to the module if it still holds it.
ModuleId Engine::read_global(ModuleId globals, const std::string& key, Binding b, const std::string& read) {
  if (b.kind == Binding::Kind::Module) return b.id;
  const ModuleId m = resolve(b.id, read);
  auto& names = lazy_.globals[globals];
  if (auto it = names.find(key); it != names.end() && it->second.kind == Binding::Kind::Lazy && it->second.id == b.id)
    it->second = Binding{Binding::Kind::Module, m};
  return m;
}

// getattr(module, attr) for a module: its globals, else a submodule listed
// in sys.lazy_modules, imported here.
ModuleId Engine::load_attr(ModuleId module, const std::string& attr, const std::string& read) {
  const auto& names = lazy_.globals[module];
  if (auto it = names.find(attr); it != names.end()) return read_global(module, attr, it->second, read);
  // Paddle's ProxyModule.__getattr__ answers what its own __dict__ lacks
  // from the paddle module it wraps (its overrides, torch.relu, are not
  // modules); only where that fails too does the sys.lazy_modules fallback
  // below import a listed submodule.
  if (interp_.records.module(module).proxy) {
    LoaderId l = interp_.records.spec(interp_.records.module(module).spec).loader;
    while (interp_.records.loader(l).kind == LoaderKind::Specific) l = interp_.records.loader(l).ref;
    if (interp_.records.loader(l).kind == LoaderKind::Proxy) {
      try {
        return load_attr(interp_.records.loader(l).ref, attr, read);
      } catch (PyError& e) {
        if (e.type != "AttributeError") throw;
      }
    }
  }
  const std::string& owner = names_.text(interp_.records.module(module).name);
  const NameId sub = names_.find(owner + "." + attr);
  // Listed itself, or a submodule of it listed ('a.b.c' makes a.b importable).
  auto listed = [&] {
    for (NameId l : lazy_.lazy_modules)
      for (NameId up = l; up != kNoName; up = names_.parent(up))
        if (up == sub) return true;
    return false;
  };
  if (sub != kNoName && listed()) {
    auto load = [&]() -> std::optional<ModuleId> {
      try {
        const ModuleId m = _find_and_load<AnyRun>(sub);
        // The import set the attribute on its parent, which may not be `module`.
        if (auto it = lazy_.globals[module].find(attr); it != lazy_.globals[module].end())
          return read_global(module, attr, it->second, read);
        return m;
      } catch (PyError& e) {
        // _find_and_load_lazy_submodule: no finder has it, None: the getattr fails.
        if (!no_module_named(e, names_.text(sub))) throw;
      }
      return std::nullopt;
    };
    if (const std::optional<ModuleId> found = traced_import(book_.trace, *this, LazyEvent::Attribute, sub, read, load))
      return *found;
  }
  raise("AttributeError", fmt::format("module '{}' has no attribute '{}'", owner, attr));
}

// `globals()['m'].resolve()`: the dict hands out the lazy object itself,
// whose resolve() imports and returns the module and leaves the global as
// it is (rule resolve-method); a module there has no resolve().
void Engine::resolve_step(const CStep& step) {
  const std::string& key = names_.text(step.target);
  const auto& names = lazy_.globals[current_globals()];
  const auto it = names.find(key);
  if (it == names.end()) raise("KeyError", "'" + key + "'");
  if (it->second.kind != Binding::Kind::Lazy)
    raise("AttributeError", "'module' object has no attribute 'resolve'");
  resolve(it->second.id, "globals()['" + key + "'].resolve()");
}

// The expression `a.b.c`: a name read, then attribute reads.
void Engine::use_step(const CStep& step) { read_expression(current_globals(), names_.text(step.target)); }

void Engine::use_in(FinderId finder, NameId searched, NameId module, const std::string& expression) {
  if (!interp_.sys_modules.contains(module)) raise("KeyError", "'" + names_.text(module) + "'");
  const FinderId outer = lazy_.reader;
  const NameId outer_searched = lazy_.searched;
  const size_t outer_frames = lazy_.reader_frames;
  lazy_.reader = finder;
  lazy_.searched = searched;
  lazy_.reader_frames = py_thread_.frames.size();
  try_finally([&] { read_expression(interp_.sys_modules.get(module), expression); },
              [&] {
                lazy_.reader = outer;
                lazy_.searched = outer_searched;
                lazy_.reader_frames = outer_frames;
              });
}

void Engine::read_expression(ModuleId globals, const std::string& expression) {
  const std::vector<std::string> parts = parts_of(expression);
  const auto& names = lazy_.globals[globals];
  auto it = names.find(parts[0]);
  if (it == names.end()) raise("NameError", fmt::format("name '{}' is not defined", parts[0]));
  std::string read = parts[0];
  ModuleId m = read_global(globals, parts[0], it->second, read);
  for (size_t i = 1; i < parts.size(); ++i) {
    read += "." + parts[i];
    m = load_attr(m, parts[i], read);
  }
}

// _find_and_load_unlocked's end for module `name`, however it was
// imported: the attribute on its parent, and its name out of
// sys.lazy_modules. (A listed submodule of it stays missing as an
// attribute: its first read imports it, load_attr.)
void Engine::module_loaded(NameId name, ModuleId module) {
  auto& listed = lazy_.lazy_modules;
  listed.erase(std::remove(listed.begin(), listed.end(), name), listed.end());
  const NameId parent = names_.parent(name);
  if (parent != kNoName && interp_.sys_modules.contains(parent)) {
    const std::string& text = names_.text(name);
    bind(interp_.sys_modules.get(parent), text.substr(text.rfind('.') + 1), Binding{Binding::Kind::Module, module});
  }
}

}  // namespace impsim
