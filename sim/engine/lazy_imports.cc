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
  if (std::find(lazy_.lazy_modules.begin(), lazy_.lazy_modules.end(), name) == lazy_.lazy_modules.end())
    lazy_.lazy_modules.push_back(name);
  ++lazy_.statements;
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

// `import a.b` in a lazy scenario: under mode "all" a module-level import
// outside try/except is lazy (the filter asked first); a function's stays
// eager, as does an optional one (try/except).
void Engine::import_step(const CStep& step) {
  const NameId top = names_.top(step.target);
  const bool function = !lazy_.frame_is_call.empty() && lazy_.frame_is_call.back();
  if (lazy_.mode_all && !step.optional && !function) {
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
  if (std::find(lazy_.resolving.begin(), lazy_.resolving.end(), id) != lazy_.resolving.end())
    raise("ImportCycleError",
          fmt::format("cannot import name '{}' (most likely due to a circular import)", names_.text(object.target)));
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

// `lazy import a.b.c as x` resolves as `from a.b import c`: __import__ of
// the parent with fromlist ('c',) (_handle_fromlist imports a.b.c unless
// a.b has the attribute, and lets a ModuleNotFoundError for a.b.c itself
// pass), then IMPORT_FROM's getattr, whose fallback is sys.modules['a.b.c'].
ModuleId Engine::import_from(NameId parent, NameId name) {
  import_statement<AnyRun>(parent);
  if (!interp_.sys_modules.contains(parent)) raise("KeyError", "'" + names_.text(parent) + "'");
  const ModuleId from = interp_.sys_modules.get(parent);
  const std::string& text = names_.text(name);
  const std::string child = text.substr(text.rfind('.') + 1);
  if (!lazy_.globals[from].count(child)) {
    try {
      _find_and_load<AnyRun>(name);
    } catch (PyError& e) {
      if (e.type != "ModuleNotFoundError" || e.message != fmt::format("No module named '{}'", text)) throw;
    }
  }
  const auto& names = lazy_.globals[from];
  if (auto it = names.find(child); it != names.end()) return read_global(from, child, it->second, text);
  if (interp_.sys_modules.contains(name)) return interp_.sys_modules.get(name);
  raise("ImportError", fmt::format("cannot import name '{}' from '{}'", child, names_.text(parent)));
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
        if (e.type != "ModuleNotFoundError" || e.message != fmt::format("No module named '{}'", names_.text(sub)))
          throw;
      }
      return std::nullopt;
    };
    if (const std::optional<ModuleId> found = traced_import(book_.trace, *this, LazyEvent::Attribute, sub, read, load))
      return *found;
  }
  raise("AttributeError", fmt::format("module '{}' has no attribute '{}'", owner, attr));
}

// The expression `a.b.c`: a name read, then attribute reads.
void Engine::use_step(const CStep& step) {
  const std::vector<std::string> parts = parts_of(names_.text(step.target));
  const ModuleId globals = current_globals();
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
