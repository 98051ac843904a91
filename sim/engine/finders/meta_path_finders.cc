// The implementations of MetaPathFinder (meta_path_finder.h), one per
// class of finder, and the table that picks one by class.
#include "impsim/engine/engine.h"
#include "impsim/engine/finders/meta_path_finder.h"
#include "impsim/engine/finders/proxy_hot_path.h"

namespace impsim {

namespace {

// BuiltinImporter.find_spec: `_imp.is_builtin(fullname)`, whatever the path.
class BuiltinImporter final : public MetaPathFinder {
  SpecId find_spec(Engine& e, FinderId self, NameId name, PathRef /*path*/) const override {
    e.count_interpreter_finder_call(self);
    return e.builtin_importer_find_spec(name);
  }
};

// FrozenImporter.find_spec: no frozen module is part of a scenario.
class FrozenImporter final : public MetaPathFinder {
  SpecId find_spec(Engine& e, FinderId self, NameId /*name*/, PathRef /*path*/) const override {
    e.count_interpreter_finder_call(self);
    return kNoSpec;
  }
};

// PathFinder.find_spec over the scenario's tree.
class PathFinder final : public MetaPathFinder {
  SpecId find_spec(Engine& e, FinderId self, NameId name, PathRef path) const override {
    e.count_interpreter_finder_call(self);
    return e.path_finder_find_spec(name, path);
  }
};

// Paddle's TorchProxyMetaFinder: one ask, counted by its own counters.
class TorchProxyMetaFinderEntry final : public MetaPathFinder {
  SpecId find_spec(Engine& e, FinderId /*self*/, NameId name, PathRef /*path*/) const override {
    return e.proxy_find_spec(name);
  }
};

// A finder class declared in the hook language.
class HookFinder final : public MetaPathFinder {
  SpecId find_spec(Engine& e, FinderId self, NameId name, PathRef path) const override {
    return e.hook_object_find_spec(self, name, path);
  }
  bool legacy(const Engine& e, FinderId self) const override { return e.is_legacy_hook(self); }
};

const BuiltinImporter builtin;
const FrozenImporter frozen;
const PathFinder path;
const TorchProxyMetaFinderEntry proxy;
const HookFinder hook;

}  // namespace

const MetaPathFinder& meta_path_finder(FinderClass cls) {
  switch (cls) {
    case FinderClass::Builtin:
      return builtin;
    case FinderClass::Frozen:
      return frozen;
    case FinderClass::Path:
      return path;
    case FinderClass::Proxy:
      return proxy;
    case FinderClass::Hook:
      return hook;
  }
  return hook;
}

}  // namespace impsim
