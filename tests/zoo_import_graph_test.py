#!/usr/bin/env python3
"""tools/gen/zoo_import_graph: a recorded import graph becomes the tree,
builtin list, preloaded parents and create_module it stands for, in the
order the searches ran, and what a zoo scenario cannot say is refused with
the name it concerns. The recording itself runs the real package (the zoo
part of tools/test checks the shipped file with --check).

    zoo_import_graph_test.py
"""
import importlib.machinery
import importlib.util
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(REPO, "tools", "gen", "zoo_import_graph")
loader = importlib.machinery.SourceFileLoader("zoo_import_graph", TOOL)
spec = importlib.util.spec_from_loader("zoo_import_graph", loader)
graph_tool = importlib.util.module_from_spec(spec)
loader.exec_module(graph_tool)

SCENARIO = {
    "impsim": 1, "name": "t", "description": "d",
    "hooks": {"h": {"claims": {"names": ["built"]}, "find_spec": [{"serve": True}], "api": "find_module"}},
    "finders": {"f": {"hook": "h"}},
    "program": [{"install": "f"}, {"import": "built"}],
    "real": {"setup": "", "bind": {}},
}


def search(name, where, found, package=False):
    return {"search": name, "in": where, "found_by": found, "package": package}


def load(name, where):
    return {"load": name, "in": where}


failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


# built's loading imports pkg (a package whose body imports pkg.sub and a
# builtin), a name found nowhere, and pkg.sub again (no search: loaded);
# enc.x's parent enc was imported before counting.
GRAPH = [
    search("built", None, "hook"), load("built", None),
    search("pkg", "built", "path", True), load("pkg", "built"),
    search("pkg.sub", "pkg", "path"), load("pkg.sub", "pkg"),
    search("_fast", "pkg.sub", "builtin"), load("_fast", "pkg.sub"),
    search("nowhere", "built", None),
    search("enc.x", "built", "path"), load("enc.x", "built"),
    load("built", "built"),  # imp.load_dynamic's own load, no search
]
out = graph_tool.build(SCENARIO, GRAPH)
check("tree", out["tree"], {
    "enc": {"package": True},
    "pkg": {"package": True, "body": [{"import": "pkg.sub"}]},
    "enc.x": {},
    "pkg.sub": {"body": [{"import": "_fast"}]},
})
check("builtin", out["builtin"], ["_fast"])
check("preloaded", out["sys_modules"], {"preloaded": ["enc"]})
check("create_module", out["hooks"]["h"]["find_spec"][0]["create_module"],
      [{"import": "pkg"}, {"import": "nowhere", "optional": True}, {"import": "enc.x"}])
check("external", out["real"]["external"], ["enc", "enc.x", "pkg", "pkg.sub"])
check("key order", list(out)[:6], ["impsim", "name", "description", "sys_modules", "builtin", "tree"])
check("the input is left as it was", "create_module" in SCENARIO["hooks"]["h"]["find_spec"][0], False)
# What it writes reads back as the same scenario.
import json  # noqa: E402
check("dumps round trip", json.loads(graph_tool.dumps(out)), out)

# Refused, naming the module: a frozen find, a step searching for a name
# no step names, a hook serving a name the scenario does not serve.
for graph, says in (
        ([search("site", None, "frozen")], "site was found by frozen"),
        ([search("built", None, "hook"), search("stray", None, "path")], "searched for stray"),
        ([search("other", "built", "hook")], "other was served by a hook")):
    try:
        graph_tool.build(SCENARIO, graph)
        failures.append("not refused: %r" % graph)
    except graph_tool.GraphError as exc:
        check("refusal", says in str(exc), True)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("zoo_import_graph: graph to scenario ok (tree, builtin, preloaded, create_module, refusals)")
