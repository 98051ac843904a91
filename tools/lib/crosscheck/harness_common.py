# What every crosscheck harness shares (harness.py for the Paddle finder,
# hook_runtime.py for the hook language, zoo_harness.py and hooks_real.py):
# the scenario's labels, JSON pointers to its steps, the .py files its tree
# is written as, and the step loop of their interpreters.  The harnesses run alone inside the interpreter under
# test (python -S -I -B), so this module is imported from beside them (their
# folder is put on sys.path for the import only) and also as
# crosscheck.harness_common by the tools.  Standard library only,
# Python >= 3.9.

import json as _json
import os as _os


def collect_labels(scenario):
    """Every step label of the program and of the tree's bodies, in order."""
    labels = []

    def walk(steps):
        for step in steps:
            if "label" in step:
                labels.append(step["label"])
            walk(step.get("body", []))

    walk(scenario.get("program", []))
    for entry in scenario.get("tree", {}).values():
        walk(entry.get("body", []))
    return labels


def escape(token):
    """A JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def body_source(key):
    """What a tree module's file holds: a call back into the interpreter."""
    return "__impsim__.body(%s, globals())\n" % _json.dumps(key)


def write_tree(tree, root):
    """Write the scenario's package tree under root as real .py files."""
    _os.makedirs(root, exist_ok=True)
    for name, entry in tree.items():
        base = _os.path.join(root, *name.split("."))
        if entry.get("package", False):
            _os.makedirs(base, exist_ok=True)
            path = _os.path.join(base, "__init__.py")
        else:
            _os.makedirs(_os.path.dirname(base), exist_ok=True)
            path = base + ".py"
        with open(path, "w") as f:
            f.write(body_source(name))


class StepLoop:
    """The step loop of a harness's interpreter: repeat, the stack of step
    pointers (where an exception was raised), labelled results and each
    label's counters.  The interpreter has params, tree, stack, where,
    active (label frames: [label, snapshot, deepest nesting]) and results,
    and gives action(step, ptr, g), label_snapshot() and
    label_add(label, snapshot, deepest, hook_deepest)."""

    def num(self, value):
        if isinstance(value, str) and value.startswith("$"):
            return int(self.params[value[1:]])
        return int(value)

    def body(self, key, g):
        """A tree module's body; `key` is the tree entry the file belongs to."""
        self.block(self.tree[key].get("body", []), "/tree/" + escape(key) + "/body", g)

    def block(self, steps, ptr, g):
        for i, step in enumerate(steps):
            self.step(step, ptr + "/" + str(i), g)

    def after_step(self):
        """Called after each step, raising or not."""

    def step(self, step, ptr, g):
        label = step.get("label")
        for _ in range(self.num(step.get("repeat", 1))):
            self.stack.append(ptr)
            frame = None
            if label is not None:
                frame = [label, self.label_snapshot(), 0, 0]  # deepest search, deepest hook call
                self.active.append(frame)
            try:
                result = self.action(step, ptr, g)
            except BaseException as exc:
                if id(exc) not in self.where:
                    self.where[id(exc)] = (exc, list(self.stack))
                if frame is not None:
                    self.results[label].append(type(exc).__name__)
                raise
            else:
                if frame is not None:
                    self.results[label].append(result)
            finally:
                self.after_step()
                if frame is not None:
                    self.active.pop()
                    self.label_add(label, frame[1], frame[2], frame[3])
                self.stack.pop()
