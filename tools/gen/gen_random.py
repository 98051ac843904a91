#!/usr/bin/env python3
"""Seeded random impsim scenarios (format version 1) for tools/check/crosscheck.

    import gen_random; gen_random.generate(seed, index, kind="classic") -> dict
    tools/gen/gen_random.py [--kind classic|revisions|lazy] [--seed S] [--count N]
                        [--first I] [--out DIR]

Program `index` of seed `seed` is always the same scenario (the RNG is seeded
with the string "impsim:SEED:INDEX"), so a mismatch found by
`tools/check/crosscheck --random N --seed S` is reproduced by regenerating it alone:
`tools/gen/gen_random.py --seed S --first I --count 1 --out DIR`.

What the programs contain: one to three top-level packages with submodules
and subpackages whose bodies import each other (circular imports included),
probe present and missing names with find_spec, import torch names through a
`paddle` tree (sometimes a real `torch` tree too), run scoped or disabling
guards, enable/disable the finder and block modules; top-level programs with
nested scoped guards (`nest`, sometimes a `$k` sweep), disabling guards, bare
enable/disable, block, call, optional steps, labels, repeat; preloaded,
filler and cached torch modules.  About 30% of the programs name their
"variants": before plus one to three other designs, sometimes all six (the
rest run impsim's default, before and after).  Nesting and copies of the finder are
bounded so that CPython runs each program well under a second (before the
fix, lookups grow like k!).

--kind revisions (`revisions_sS_I`): program `random_sS_I` plus, drawn from a
second RNG (so the classic programs are unchanged), steps that exercise what
the finder revisions and its starting state differ on: a scoped guard
holding another scoped guard or a scoped enable (04efefd's saved scope is the
set an in-place `|=` extends), then imports of the inner scope; proxy torch
modules in sys.modules when a scoped enable walks it (b52ce17 deletes them,
04efefd keeps them); real torch modules moved into the cache and imported
back, then their children (b52ce17's cached spec is a package);
enable with blocked_modules (a TypeError on 04efefd).

--kind lazy (`lazy_sS_I`, "cpython": "3.15"; its own RNG): PEP 810 lazy
imports (docs/lazy-imports.md).  A small tree: one to three top-level
modules and a package with submodules (sometimes a subpackage), whose bodies
import, lazily import and use names, some of them failing by importing a
missing module; sometimes Paddle's tree.  A program of at most 40 steps (the
bodies' counted) mixing import, lazy_import (with and without "as"),
lazy_from (submodules, a missing name, aliases; of a package or a plain
module), resolve (globals()[alias].resolve() after an aliased statement), use (of top names, aliases and dotted a.b attributes, some
optional), find_spec and import_module; sometimes set_lazy_imports "all"
(first or midway), sometimes a lazy-imports filter (set, sometimes cleared
later), sometimes __lazy_modules__ (in the program or a body); sometimes Paddle's
enable / guard / disable around lazy statements and uses of torch names, so
the finder runs under lazy imports.  A use names what the same scope bound
before (or, rarely, what a module's body bound), so most programs run to
their end.
"""

import argparse
import json
import os
import random
import sys

# Top-level names: none of them exists in the standard library (checked below
# on Python >= 3.10) and none starts with an underscore.
TOP_NAMES = ["apkg", "bpkg", "cpkg", "quark", "orbit"]
SUB_NAMES = ["a", "b", "c", "core", "util"]
LEAF_NAMES = ["leaf", "impl"]  # a third level's names, none a second level's (lazy kind)
MISSING = ["missing", "optional_dep", "nothere"]
ORDINARY_PRELOADED = ["numpy", "extlib"]
PADDLE_TREE = {
    "paddle": {"package": True},
    "paddle.nn": {"package": True},
    "paddle.nn.functional": {},
    "paddle.ops": {},
}
TORCH_TREE = {"torch": {"package": True}, "torch.hub": {}}
TORCH_NAMES = ["torch", "torch.nn", "torch.nn.functional", "torch.ops", "torch.hub"]
CACHED_TORCH = [["torch"], ["torch", "torch.cuda"], ["torch", "torch.nn"]]
# impsim's designs, in its order (include/impsim/scenario/variant.h).  Most programs
# leave out "variants" (impsim's default: before and after); some run
# "before" and one to three of the others, a few all six.
DESIGNS = ["before", "after", "idempotent-enable", "disable-all",
           "indexed-walk", "after+idempotent-enable"]
KINDS = ("classic", "revisions", "lazy")
# --kind lazy: plain top-level modules, the package names, the aliases.
LAZY_MODULES = ["quark", "orbit", "photon"]
LAZY_PACKAGES = ["apkg", "bpkg"]
LAZY_ALIASES = ["ali", "bob", "cid"]

if hasattr(sys, "stdlib_module_names"):
    for _n in TOP_NAMES + ORDINARY_PRELOADED + LAZY_MODULES + ["nomod", "paddle", "torch"]:
        assert _n not in sys.stdlib_module_names, _n


class _Draws:
    """What both kinds of program draw with: a chance, and labels L0, L1..."""

    def __init__(self, rng):
        self.rng = rng
        self.labels = 0

    def chance(self, p):
        return self.rng.random() < p

    def label(self, step, p):
        if self.chance(p):
            step["label"] = "L%d" % self.labels
            self.labels += 1
        return step


class _Gen(_Draws):
    def __init__(self, rng):
        super().__init__(rng)
        self.guards_in_bodies = 0
        self.enables = 0

    # -- the tree ---------------------------------------------------------------
    def tree(self):
        rng = self.rng
        tree = {}
        tops = rng.sample(TOP_NAMES, rng.randint(1, 3))
        for top in tops:
            tree[top] = {"package": True}
            for sub in rng.sample(SUB_NAMES, rng.randint(0, 3)):
                name = top + "." + sub
                if self.chance(0.3):
                    tree[name] = {"package": True}
                    for leaf in rng.sample(SUB_NAMES, rng.randint(0, 2)):
                        tree[name + "." + leaf] = {}
                else:
                    tree[name] = {}
        self.has_paddle = self.chance(0.45)
        if self.has_paddle:
            for name, entry in PADDLE_TREE.items():
                tree[name] = dict(entry)
        self.has_torch = self.chance(0.15)
        if self.has_torch:
            for name, entry in TORCH_TREE.items():
                tree[name] = dict(entry)
        self.tops = tops
        self.names = list(tree)
        # Names blocks may pick: with a real torch tree, blocking torch names
        # makes unbounded recursions (CPython: RecursionError).
        self.blockable = [n for n in tree if not n.startswith("torch")]
        if self.has_torch and self.chance(0.1):
            self.blockable.append("torch")
        self.packages = [n for n in tree if tree[n].get("package")]
        for name in tree:
            if self.chance(0.7):
                body = [self.body_step(name) for _ in range(self.rng.randint(1, 3))]
                tree[name]["body"] = body
        return tree

    def missing_name(self):
        rng = self.rng
        if self.chance(0.1):
            return "nomod"
        if self.chance(0.6):
            return rng.choice(self.tops) + "." + rng.choice(MISSING)
        return rng.choice(self.packages) + "." + rng.choice(MISSING)

    def scope(self):
        rng = self.rng
        pool = self.tops + [n for n in self.names if n.count(".") == 1
                            and not n.startswith(("paddle", "torch"))]
        scope = [rng.choice(self.tops) if self.chance(0.7) else rng.choice(pool)]
        if self.chance(0.3):
            scope.append(rng.choice(pool))
        if self.chance(0.02 if self.has_torch else 0.1):
            scope.append("torch")
        return scope

    def body_step(self, owner):
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            step = {"import": rng.choice(self.names)}
        elif r < 0.6:
            name = self.missing_name() if self.chance(0.75) else rng.choice(self.names)
            step = {"find_spec": name}
            if self.chance(0.5):
                step["optional"] = True
        elif r < 0.72:
            step = {"import": rng.choice(TORCH_NAMES), "optional": True}
        elif r < 0.8:
            step = {"import": self.missing_name(), "optional": True}
        elif r < 0.88 and self.guards_in_bodies < 2:
            self.guards_in_bodies += 1
            enable = self.chance(0.6)
            guard = {"enable": enable}
            if enable or self.chance(0.3):
                guard["scope"] = self.scope()
            step = {"guard": guard, "body": [self.leaf_step()]}
        elif r < 0.92:
            step = {"block": [rng.choice(self.blockable)]}
        elif r < 0.95 and self.enables < 2:
            self.enables += 1
            if self.chance(0.5):
                step = {"enable": {"scope": self.scope()}}
            else:
                step = {"disable": {}}
        else:
            step = {"find_spec": self.missing_name(), "optional": True}
        return self.label(step, 0.15)

    def leaf_step(self):
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            return {"import": rng.choice(self.names)}
        if r < 0.8:
            return {"find_spec": self.missing_name(), "optional": True}
        return {"import": rng.choice(TORCH_NAMES), "optional": True}

    # -- the program -------------------------------------------------------------
    def program(self, kmax):
        rng = self.rng
        self.imported = []
        self.extra = 0
        steps = []
        if self.chance(0.75):
            steps.append(self.scoped_nest(kmax, first=True))
        for _ in range(rng.randint(0, 3)):
            steps.append(self.program_step(kmax))
        return steps

    def scoped_nest(self, kmax, first=False):
        rng = self.rng
        # Copies left behind by earlier steps multiply the cost of this nest.
        kmax = max(1, kmax - self.extra)
        k = "$k" if self.sweep else rng.randint(max(0 if not first else 1, kmax - 2), kmax)
        scope = self.scope()
        if self.chance(0.85):
            scope.append("other{i}")
        body = []
        scoped_tops = [n for n in scope if n in self.tops]
        if first or self.chance(0.5):
            top = rng.choice(scoped_tops or self.tops)
            body.append(self.label({"import": top}, 0.5))
            self.imported.append(top)
        if scoped_tops and self.chance(0.7):
            probe = {"find_spec": rng.choice(scoped_tops) + "." + rng.choice(MISSING)}
            body.append(self.label(probe, 0.6))
        body.extend(self.inner_steps(rng.randint(1, 3)))
        step = {"nest": k, "guard": {"enable": True, "scope": scope}, "body": body}
        if self.chance(0.1) and k != "$k" and k <= 3:
            step["repeat"] = 2
        return self.label(step, 0.4)

    def inner_steps(self, n):
        rng = self.rng
        steps = []
        for _ in range(n):
            r = rng.random()
            if r < 0.35:
                step = {"import": rng.choice(self.tops + self.names)}
                if self.chance(0.2):
                    step["optional"] = True
                else:
                    self.imported.append(step["import"])
            elif r < 0.65:
                step = {"find_spec": self.missing_name()}
                if self.chance(0.3):
                    step["optional"] = True
            elif r < 0.75:
                step = {"import": rng.choice(TORCH_NAMES), "optional": True}
            elif r < 0.87:
                step = {"guard": {"enable": False}, "body": [self.leaf_step()]}
            elif r < 0.95 and (self.imported or self.chance(0.1)):
                step = {"call": rng.choice(self.imported or self.names),
                        "body": [self.leaf_step()]}
            else:
                step = {"import": rng.choice(self.names), "repeat": 2}
            steps.append(self.label(step, 0.5))
        return steps

    def program_step(self, kmax):
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            return self.scoped_nest(kmax)
        elif r < 0.55:
            step = {"guard": {"enable": False}, "body": self.inner_steps(rng.randint(1, 2))}
            if self.chance(0.4):
                step["guard"]["scope"] = self.scope()
            self.extra += 1
        elif r < 0.65:
            self.extra += 1
            scope = None if self.chance(0.3) else self.scope()
            step = {"enable": {"scope": scope}}
            if scope is None and self.chance(0.3):
                step = {"guard": {"enable": True, "scope": None},
                        "body": self.inner_steps(rng.randint(1, 2))}
            elif self.chance(0.1):
                step = {"guard": {"enable": self.chance(0.5), "scope": []},
                        "body": self.inner_steps(1)}
        elif r < 0.72:
            step = {"disable": {}}
        elif r < 0.77:
            step = {"block": [rng.choice(self.blockable)]}
        else:
            return self.inner_steps(1)[0]
        return self.label(step, 0.4)

    # -- the designs ---------------------------------------------------------------
    def variants(self):
        """None (impsim's default pair) or the designs to run, in impsim's order."""
        rng = self.rng
        r = rng.random()
        if r < 0.7:
            return None
        if r < 0.75:
            return list(DESIGNS)
        chosen = {"before"} | set(rng.sample(DESIGNS[1:], rng.randint(1, 3)))
        return [d for d in DESIGNS if d in chosen]


def _revision_steps(scenario, rng):
    """--kind revisions: add steps where the revisions and the start differ."""
    tree = scenario["tree"]
    program = scenario["program"]
    labels = iter("R%d" % i for i in range(100))
    own = [n for n in tree if not n.startswith(("paddle", "torch"))]
    pool = [n for n in own if n.count(".") <= 1]

    def scope():
        return rng.sample(pool, min(len(pool), rng.randint(1, 2)))

    def under(names):
        """A tree module inside one of names (an import a scope changes)."""
        inside = [n for n in own if any(n == s or n.startswith(s + ".")
                                        for s in names)]
        return rng.choice(inside or own)

    def labelled(step):
        step["label"] = next(labels)
        return step

    if "paddle" not in tree and rng.random() < 0.7:
        for name, entry in PADDLE_TREE.items():
            tree[name] = dict(entry)
    end = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.35:
            # A scoped guard holding a scoped guard (or a scoped enable),
            # then an import inside the inner scope only.
            outer, inner = scope(), scope()
            if rng.random() < 0.6:
                first = {"guard": {"enable": True, "scope": inner},
                         "body": [{"find_spec": "nomod", "optional": True}]}
            else:
                first = {"enable": {"scope": inner}}
            body = [first, labelled({"import": under(inner), "optional": True})]
            if rng.random() < 0.5:
                body.append(labelled({"find_spec": rng.choice(inner) + ".missing",
                                      "optional": True}))
            step = {"guard": {"enable": True, "scope": outer}, "body": body}
            if "enable" in first:
                end.append(step)
            else:
                program.insert(rng.randint(0, len(program)), step)
        elif r < 0.65:
            # Proxy torch modules in sys.modules when a scoped enable walks.
            torch = rng.choice(TORCH_NAMES[:4])
            steps = [{"enable": {"scope": None}} if rng.random() < 0.5 else
                     {"guard": {"enable": True, "scope": None},
                      "body": [labelled({"import": torch, "optional": True})]},
                     labelled({"import": torch, "optional": True}),
                     {"enable": {"scope": scope()}},
                     labelled({"import": rng.choice(TORCH_NAMES[:4]), "optional": True}),
                     {"disable": {}}]
            end.extend(steps)
        elif r < 0.9:
            # Real torch modules moved into the cache, imported back, then
            # their children.
            if rng.random() < 0.5 and "torch" not in tree:
                for name, entry in TORCH_TREE.items():
                    tree[name] = dict(entry)
            if "torch" in tree:
                program.insert(0, {"import": "torch.hub", "optional": True})
                parent = "torch.hub"
            else:
                cached = scenario.setdefault("sys_modules", {}).setdefault(
                    "torch", ["torch"])
                parent = rng.choice(cached)
            end.extend([
                {"enable": {"scope": scope()}},
                labelled({"import": parent, "optional": True}),
                labelled({"import": parent + ".child", "optional": True}),
                labelled({"find_spec": parent + ".child", "optional": True}),
            ])
        else:
            blocked = rng.choice(pool)
            end.extend([
                {"enable": {"scope": scope(), "blocked_modules": [blocked]}},
                labelled({"import": under([blocked]), "optional": True}),
            ])
    program.extend(end)


class _Scope:
    """What one namespace (the program's, or a module body's) bound so far:
    the names a `use` may read without a NameError, and the dotted names
    imported there (their attributes exist or are in sys.lazy_modules)."""

    def __init__(self):
        self.names = []    # bound names, first binding first
        self.dotted = []   # "a.b" imported (lazily or not) in this scope
        self.failing = set()  # bound names whose import fails at a use

    def bind(self, name, alias=None, fails=False):
        bound = alias or name.partition(".")[0]
        if bound not in self.names:
            self.names.append(bound)
        if fails:
            self.failing.add(bound)
        else:
            self.failing.discard(bound)
        if alias is None and "." in name and name not in self.dotted:
            self.dotted.append(name)


class _LazyGen(_Draws):
    """--kind lazy: see the module's docstring."""

    # -- the tree ---------------------------------------------------------------
    def tree(self):
        rng = self.rng
        tree = {}
        for name in rng.sample(LAZY_MODULES, rng.randint(1, 3)):
            tree[name] = {}
        package = rng.choice(LAZY_PACKAGES)
        tree[package] = {"package": True}
        self.packages = [package]
        for sub in rng.sample(SUB_NAMES, rng.randint(1, 3)):
            name = package + "." + sub
            if self.chance(0.25):
                tree[name] = {"package": True}
                self.packages.append(name)
                # A name no other level uses: 3.15.0rc1 binds `lazy import
                # p.b.core as x` to p.core, eagerly, where p.core is loaded
                # (docs/lazy-imports.md, "A bug in 3.15.0rc1").
                tree[name + "." + rng.choice(LEAF_NAMES)] = {}
            else:
                tree[name] = {}
        self.package = package
        self.names = list(tree)
        self.has_paddle = self.chance(0.3)
        if self.has_paddle:
            for name, entry in PADDLE_TREE.items():
                tree[name] = dict(entry)
        # Modules whose body fails (it imports a missing module), and the
        # names whose import therefore fails (the module, and its parents'
        # imports do not: a failing submodule fails `import p.sub` only).
        self.failing = set()
        for name in self.names:
            if self.chance(0.12):
                self.failing.add(name)
        self.bound_by = {}  # module -> names its body binds before failing
        for name in self.names:
            if name in self.failing or self.chance(0.65):
                tree[name]["body"] = self.body(name)
        if self.has_paddle and self.chance(0.3):
            tree["paddle.nn"]["body"] = [{"lazy_import": "paddle.ops"}]
        return tree

    def lazy_from(self, scope, owner=None):
        """`lazy from m import ...`: submodules of a package (sometimes a
        missing name, sometimes an alias), or of a plain module (none of
        them exists), each name bound in the scope."""
        rng = self.rng
        plain = [n for n in self.names if n not in self.packages and n != owner]
        packages = [n for n in self.packages if n != owner]
        if packages and (not plain or self.chance(0.8)):
            m = rng.choice(packages)
            subs = [n.rpartition(".")[2] for n in self.names if n.rpartition(".")[0] == m]
            picks = rng.sample(subs, min(len(subs), rng.randint(1, 2)))
            if not picks or self.chance(0.2):
                picks.append(rng.choice(MISSING))
        elif plain:
            m, picks = rng.choice(plain), [rng.choice(MISSING)]
        else:
            return {"find_spec": self.missing(), "optional": True}
        names = []
        for x in picks:
            alias = rng.choice(LAZY_ALIASES) if self.chance(0.25) else None
            if alias is None and (x in LEAF_NAMES or x in (owner or "").split(".")):
                # A third level's name bound as itself could land in the top
                # package's globals, and a part of a module's own name in its
                # globals, where 3.15.0rc1 finds them for `lazy import
                # p.b.leaf as x` and `lazy import p.m as x`
                # (docs/lazy-imports.md, "A bug in 3.15.0rc1").
                alias = rng.choice(LAZY_ALIASES)
            names.append(x + (" as " + alias if alias else ""))
            full = m + "." + x
            scope.bind(alias or x, None, full not in self.names or self.fails(full) or self.fails(m))
        return {"lazy_from": m, "names": names}

    def lazy_modules(self):
        """`__lazy_modules__ = [...]`: some tree names, sometimes a missing one."""
        rng = self.rng
        names = rng.sample(self.names, min(len(self.names), rng.randint(1, 3)))
        if self.chance(0.2):
            names.append(self.missing())
        return {"__lazy_modules__": names}

    def fails(self, name):
        """Whether importing name (all of its parents, then it) fails."""
        parts = name.split(".")
        return any(".".join(parts[:i]) in self.failing for i in range(1, len(parts) + 1))

    def missing(self):
        rng = self.rng
        if self.chance(0.5):
            return rng.choice(MISSING)
        return self.package + "." + rng.choice(MISSING)

    def body(self, owner):
        rng = self.rng
        scope = _Scope()
        steps = []
        others = [n for n in self.names if n != owner]
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.35 and others:
                name = rng.choice(others)
                step = {"lazy_import": name}
                if "." in name and self.chance(0.3):
                    step["as"] = rng.choice(LAZY_ALIASES)
                scope.bind(name, step.get("as"), self.fails(name))
            elif r < 0.55 and others:
                name = rng.choice(others)
                step = {"import": name}
                if self.fails(name):
                    step["optional"] = True
                else:
                    scope.bind(name)
            elif r < 0.8 and scope.names:
                step = self.use(scope)
            elif r < 0.88:
                step = self.lazy_from(scope, owner)
            else:
                step = {"find_spec": rng.choice(others + [self.missing()])
                        if others else self.missing(), "optional": True}
            steps.append(self.label(step, 0.15))
        if self.chance(0.15):
            steps.insert(0, self.lazy_modules())
        self.bound_by[owner] = list(scope.names)
        if owner in self.failing:
            steps.insert(rng.randint(0, len(steps)), {"import": self.missing()})
        return steps

    def use(self, scope):
        """A use of something the scope bound; optional when it fails."""
        rng = self.rng
        if scope.dotted and self.chance(0.4):
            name = rng.choice(scope.dotted)
            if name.count(".") > 1 and self.chance(0.5):
                name = name.rpartition(".")[0]
        else:
            name = rng.choice(scope.names)
        step = {"use": name}
        if name.partition(".")[0] in scope.failing or any(
                self.fails(d) for d in scope.dotted if d == name):
            if self.chance(0.85):
                step["optional"] = True
        elif self.chance(0.15):
            step["optional"] = True
        return step

    # -- the program -------------------------------------------------------------
    def program(self):
        rng = self.rng
        scope = _Scope()
        self.scope = scope
        steps = []
        n = rng.randint(4, 14)
        all_at = None
        if self.chance(0.35):
            all_at = 0 if self.chance(0.5) else rng.randint(1, n - 1)
        filter_at = rng.randint(0, n - 1) if self.chance(0.3) else None
        dunder_at = rng.randint(0, n - 1) if self.chance(0.25) else None
        paddle_at = rng.randint(0, n - 1) if self.has_paddle and self.chance(0.8) else None
        self.enabled = False
        for i in range(n):
            if i == all_at:
                steps.append({"set_lazy_imports": "all"})
            if i == filter_at:
                eager = rng.sample(self.names, rng.randint(1, 2))
                steps.append({"set_lazy_imports_filter": {"eager": eager}})
            if i == dunder_at:
                steps.append(self.lazy_modules())
            if i == paddle_at:
                steps.extend(self.paddle_steps())
            step = self.program_step()
            steps.append(step)
            # globals()[alias].resolve() right after the statement, while no
            # filter can have made it eager: the global holds the lazy object.
            if "lazy_import" in step and "as" in step and filter_at is None and self.chance(0.3):
                steps.append({"resolve": step["as"], "optional": True})
        if filter_at is not None and self.chance(0.3):
            steps.insert(rng.randint(filter_at + 1, len(steps)),
                         {"set_lazy_imports_filter": None})
        if self.enabled and self.chance(0.5):
            steps.append({"disable": {}})
        return steps

    def target(self):
        """A name to import: a tree module mostly, sometimes a missing one."""
        if self.chance(0.12):
            return self.missing()
        return self.rng.choice(self.names)

    def program_step(self):
        rng = self.rng
        scope = self.scope
        r = rng.random()
        if r < 0.3:
            name = self.target()
            step = {"lazy_import": name}
            if self.chance(0.25):
                step["as"] = rng.choice(LAZY_ALIASES)
            bad = name not in self.names or self.fails(name)
            scope.bind(name, step.get("as"), bad)
        elif r < 0.45:
            name = self.target()
            step = {"import": name}
            if name not in self.names or self.fails(name):
                step["optional"] = True
            else:
                scope.bind(name)
        elif r < 0.7 and scope.names:
            step = self.use(scope)
        elif r < 0.75 and scope.names:
            # An attribute a module's body bound (lazily or not).
            owners = [n for n in scope.names if n in self.bound_by and self.bound_by[n]]
            if owners:
                owner = rng.choice(owners)
                step = {"use": owner + "." + rng.choice(self.bound_by[owner]), "optional": True}
            else:
                step = self.use(scope)
        elif r < 0.82:
            step = self.lazy_from(scope)
        elif r < 0.9:
            name = self.target() if self.chance(0.7) else self.missing()
            step = {"find_spec": name}
            if self.chance(0.5):
                step["optional"] = True
        else:
            name = self.target()
            step = {"import_module": name}
            if name not in self.names or self.fails(name) or self.chance(0.2):
                step["optional"] = True
        return self.label(step, 0.3)

    def paddle_steps(self):
        """Paddle's finder around lazy statements and uses of torch names."""
        rng = self.rng
        torch = rng.choice(TORCH_NAMES[:4])
        r = rng.random()
        scope = None if self.chance(0.4) else [rng.choice(self.names).partition(".")[0]]
        if r < 0.4:
            self.enabled = True
            steps = [{"lazy_import": torch},
                     {"enable": {"scope": scope}},
                     self.label({"use": torch, "optional": True}, 0.3)]
        elif r < 0.75:
            steps = [{"guard": {"enable": True, "scope": scope}, "body": [
                {"lazy_import": torch},
                self.label({"use": torch, "optional": True}, 0.3)]}]
        else:
            self.enabled = True
            steps = [{"enable": {"scope": scope}},
                     {"import": torch, "optional": True},
                     {"lazy_import": torch},
                     {"guard": {"enable": False},
                      "body": [self.label({"use": "torch", "optional": True}, 0.3)]}]
            if self.chance(0.5):
                steps.append({"disable": {}})
                self.enabled = False
        self.scope.bind(torch, fails=True)  # torch is not a tree module
        return steps


def _count_steps(steps):
    return sum(1 + _count_steps(s.get("body", [])) for s in steps)


def _lazy(seed, index):
    rng = random.Random("impsim-lazy:%s:%s" % (seed, index))
    g = _LazyGen(rng)
    tree = g.tree()
    program = g.program()
    bodies = sum(_count_steps(e.get("body", [])) for e in tree.values())
    while program and bodies + _count_steps(program) >= 40:
        program.pop()
    if not any(k in s for s in program for k in ("lazy_import", "lazy_from", "set_lazy_imports",
                                                  "__lazy_modules__")):
        # Every program has a lazy statement of its own.
        name = g.target()
        program.insert(rng.randint(0, len(program)), {"lazy_import": name})
        if bodies + _count_steps(program) < 39:
            program.append({"use": name.partition(".")[0], "optional": True})
    scenario = {
        "impsim": 1,
        "name": "lazy_s%s_%d" % (seed, index),
        "description": "tools/gen/gen_random.py --kind lazy --seed %s --first %d --count 1"
                       % (seed, index),
        "cpython": "3.15",
        "tree": tree,
        "program": program,
    }
    # Without Paddle steps every design runs the same program: one is enough.
    if not any(k in s for s in program for k in ("enable", "guard", "disable")):
        scenario["variants"] = ["before"]
    return scenario


def generate(seed, index, kind="classic"):
    """Scenario `index` of seed `seed` (a dict in scenario format version 1).

    kind "revisions": the classic program plus _revision_steps, drawn from
    a second RNG.  kind "lazy": a PEP 810 program of its own (_lazy).
    """
    if kind not in KINDS:
        raise ValueError("unknown kind %r" % kind)
    if kind == "lazy":
        return _lazy(seed, index)
    scenario = _classic(seed, index)
    if kind == "revisions":
        rng = random.Random("impsim-revisions:%s:%s" % (seed, index))
        _revision_steps(scenario, rng)
        scenario["name"] = "revisions_s%s_%d" % (seed, index)
        scenario["description"] = ("tools/gen/gen_random.py --kind revisions --seed "
                                   "%s --first %d --count 1" % (seed, index))
    return scenario


def _classic(seed, index):
    rng = random.Random("impsim:%s:%s" % (seed, index))
    g = _Gen(rng)
    tree = g.tree()
    g.sweep = g.chance(0.15)
    kmax = rng.choice([2, 3, 4, 4, 5, 5])
    if g.enables or g.guards_in_bodies > 1:
        kmax = min(kmax, 4)  # bodies that add copies of P multiply the cost
    program = g.program(kmax)
    scenario = {
        "impsim": 1,
        "name": "random_s%s_%d" % (seed, index),
        "description": "tools/gen/gen_random.py --seed %s --first %d --count 1" % (seed, index),
    }
    if g.sweep:
        scenario["params"] = {"k": 1}
        scenario["sweep"] = {"param": "k", "values": [1, 3, 4],
                             "title": "finder registrations"}
    sys_modules = {}
    if g.chance(0.3):
        pre = rng.sample(ORDINARY_PRELOADED, rng.randint(0, 2))
        if g.chance(0.5):
            pre.append(rng.choice([n for n in g.names if not n.startswith("torch")]))
        sys_modules["preloaded"] = pre
    if g.chance(0.3):
        sys_modules["torch"] = list(rng.choice(CACHED_TORCH))
    if g.chance(0.4):
        sys_modules["filler"] = rng.randint(1, 30)
    if sys_modules:
        scenario["sys_modules"] = sys_modules
    scenario["tree"] = tree
    if g.chance(0.2):
        scenario["blocked"] = ["tvm_ffi", rng.choice(g.blockable)]
    scenario["program"] = program
    # Drawn last, so the rest of program `index` does not depend on it.
    variants = g.variants()
    if variants:
        scenario["variants"] = variants
    return scenario


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=KINDS, default="classic")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", help="write one JSON file per scenario into DIR "
                    "(default: print them, one per line)")
    args = ap.parse_args(argv)
    for i in range(args.first, args.first + args.count):
        sc = generate(args.seed, i, kind=args.kind)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, sc["name"] + ".json"), "w") as f:
                json.dump(sc, f, indent=1)
                f.write("\n")
        else:
            print(json.dumps(sc))


if __name__ == "__main__":
    main()
