"""What tools/check/check_reports.py and tools/check/check_scenario_schema.py
share: the --impsim flag, the list of failures, and a validator for one of
docs/*.schema.json.

Needs python3-jsonschema >= 4 (Debian bookworm: 4.10.3); tools/setup installs it.
"""
import argparse
import json
import os
import subprocess

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SchemaCheck:
    def __init__(self, description, schema_name, add_arguments=None):
        ap = argparse.ArgumentParser(description=description)
        ap.add_argument("--impsim", default=os.path.join(ROOT, "build", "impsim"))
        if add_arguments:
            add_arguments(ap)
        self.args = ap.parse_args()
        self.impsim_path = self.args.impsim
        self.failures = []
        with open(os.path.join(ROOT, "docs", schema_name)) as f:
            self.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)
        self.validator = jsonschema.Draft202012Validator(self.schema)

    def fail(self, msg):
        self.failures.append(msg)
        print("FAIL", msg)

    def schema_errors(self, doc, width):
        """Each error as "/json/pointer: message", the message cut at `width`."""
        return [f"{'/' + '/'.join(map(str, e.absolute_path))}: {e.message[:width]}"
                for e in self.validator.iter_errors(doc)]

    def impsim(self, argv, **kwargs):
        return subprocess.run([self.impsim_path] + argv, capture_output=True, text=True, **kwargs)
