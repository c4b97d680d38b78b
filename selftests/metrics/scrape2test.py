#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scrape2test.py RULES ASSERTIONS SCRAPE...: a promtool rules unit test
(promtool test rules) whose input series are toed's own /metrics, as
scraped by selftests/metrics/test_rules_scrape.sh: scrape i is the sample
of minute i of every series (instance="h1", job="toed" added, as a scrape
job would; a series missing from a scrape is "_"), and `up` is 1 in each.
ASSERTIONS: the YAML of the test's promql_expr_test / alert_rule_test (one
test, indented as under "tests: - "), appended as is.  Prints the test."""
import json
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$')


def scrape(path):
    """{series selector: value} of one scrape (comments left out)."""
    out = {}
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line.strip())
            if not m or line.startswith('#'):
                continue
            name, labels, value = m.groups()
            inner = (labels or '{}')[1:-1]
            extra = 'instance="h1",job="toed"'
            out['%s{%s%s}' % (name, extra, ',' + inner if inner else '')] = value
    return out


def main():
    rules, asserts, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    scrapes = [scrape(p) for p in paths]
    names = sorted(set().union(*scrapes))
    print('rule_files:\n  - %s\nevaluation_interval: 1m\ntests:\n  - interval: 1m' % json.dumps(rules))
    print('    input_series:')
    for n in names:
        vals = ' '.join(s.get(n, '_') for s in scrapes)
        print('      - series: %s\n        values: %s' % (json.dumps(n), json.dumps(vals)))
    print('      - series: \'up{instance="h1",job="toed"}\'\n        values: "%s"'
          % ' '.join('1' for _ in scrapes))
    with open(asserts) as f:
        sys.stdout.write(f.read())


if __name__ == '__main__':
    main()
