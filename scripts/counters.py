#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scripts/counters.py [TOP]: every counter opentoe has, and the tests that
read it by name (selftests/style/test_counters.sh runs it).

The counters, from the tables that define them (as build/toe-tables -j
dumps them: scripts/toetables.py):
  stat     TOE_STAT_TABLE (include/opentoe_stats.h): toe_stats' counters;
  parse    enum toe_parse_result (include/toe_parse.h): the parse results;
  daemon   toectl stats' "daemon" section (TOE_DAEMON_COUNTERS, fields.h);
  control  its "control" section (TOE_CONTROL_COUNTERS, fields.h);
  family   the metrics families (TOE_METRIC_FAMILIES, user/toed/fields.h);
  reason   toectl stats' "reasons" section (toe_reasons,
           include/opentoe_reasons.h): fwd_flows_HOOK_REASON and
           fwd_packets_HOOK_REASON of TOE_FWD_REASON_TABLE (a reason
           on the hooks of its hooks column, packets if its pkts
           column says so), bypass_to_tcp_WHY (TOE_BYP_WHY_TABLE),
           refused_REASON (TOE_REASON_TABLE's counted column).

A test reads a counter by name when a file under selftests/ (not mutants/,
not this check's allow-list) names it in one of the ways a test reads it:
  stat     $STAT_<ID>, a jq path .<name>, or opentoe_datapath_<name>_total;
  parse    $PARSE_<ID>, .xdp_parse_<name>, or result="<name>";
  daemon, control   a jq path .<name>, or "<name>" (a quoted JSON key);
  family   its name (a PromQL query, a grep of a scrape);
  reason   its name (a jq path .reasons.NAME, a word in a list), or for
           the bypass's and the refusals' their index $RSN_<ID>.
A name in a comment or an echo still counts: the rule is that some test
names it, the review that the test makes it move.

Prints one line per counter no test reads: "KIND NAME"; with --all, every
counter, "KIND NAME read|unread".
"""
import glob
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toetables  # noqa: E402 (beside this file)


def read(path):
    with open(path) as f:
        return f.read()


def stat_rows(top):
    """[(ID, name)] of TOE_STAT_TABLE's named counters."""
    return [(s['id'], s['name']) for s in toetables.load(top)['stats'] if s['name'] is not None]


def parse_rows(top):
    """[(ID, name)] of the parse results (enum toe_parse_result)."""
    return [(p['id'], p['name']) for p in toetables.load(top)['parse']]


def ctl_rows(top, section):
    """The names of toectl stats' section (daemon, control), in its order."""
    return [c['name'] for c in toetables.load(top)['counters'] if c['section'] == section]


def family_rows(top):
    """The metrics families' names (TOE_METRIC_FAMILIES)."""
    return [f['name'] for f in toetables.load(top)['metric_families']]


def cmap_rows(top):
    """[(toectl name, family, labels or '')]: the toectl stats counters the
    metrics carry, and where (user/toed/fields.h's counter rows)."""
    return [(c['name'], c['family'], c['labels'] or '') for c in toetables.load(top)['counters']
            if c['family'] is not None]


def reason_rows(top):
    """The names of toectl stats' reasons section (fwdev.c's reason_counters),
    from the tables' columns: a forward reason on each hook of its hooks,
    with packets if it has a packet counter; every bypass why; every
    decision reason sock_ops counts (refusals)."""
    t = toetables.load(top)
    out = []
    for hook in (h['name'] for h in t['fwd_hooks']):
        for r in t['fwd_reasons']:
            if hook not in r['hooks'].split(','):
                continue
            out.append('fwd_flows_%s_%s' % (hook, r['name']))
            if r['packets']:
                out.append('fwd_packets_%s_%s' % (hook, r['name']))
    out += ['bypass_to_tcp_' + w['name'] for w in t['bypass_whys']]
    out += ['refused_' + r['name'] for r in t['reasons'] if r['counted']]
    return out


def counters(top):
    """[(kind, name, [regex of a read])] of every counter."""
    out = []
    for i, n in stat_rows(top):
        out.append(('stat', n, [r'\bSTAT_%s\b' % i, r'\.%s\b' % n,
                                r'\bopentoe_datapath_%s_total\b' % n]))
    for i, n in parse_rows(top):
        out.append(('parse', 'xdp_parse_' + n,
                    [r'\bPARSE_%s\b' % i, r'\.xdp_parse_%s\b' % n,
                     r'result=\\?"%s\\?"' % n]))
    for kind in ('daemon', 'control'):
        for n in ctl_rows(top, kind):
            out.append((kind, n, [r'\.%s\b' % n, r'\\?"%s\\?"' % n]))
    for n in reason_rows(top):
        # or its toe_reasons index by name ($RSN_BYP_NO_PEER, $RSN_REFUSED_QUOTA)
        rsn = n.upper().replace('BYPASS_TO_TCP_', 'RSN_BYP_').replace('REFUSED_', 'RSN_REFUSED_')
        out.append(('reason', n, [r'\b%s\b' % n, r'\$%s\b' % rsn]))
    keys = {}
    for k, f, _ in cmap_rows(top):
        keys.setdefault(f, []).append(k)
    for n in family_rows(top):
        out.append(('family', n, [r'\b%s(_bucket|_sum|_count)?\b' % n], keys.get(n, [])))
    return out


def test_text(top):
    """The text of every file under selftests/ a test may read with."""
    skip = ('selftests/mutants/', 'selftests/style/counters-untested.txt')
    files = sorted(glob.glob(os.path.join(top, 'selftests/**/*'), recursive=True))
    parts = []
    for f in files:
        rel = os.path.relpath(f, top)
        if os.path.isfile(f) and not rel.startswith(skip):
            try:
                parts.append(read(f))
            except UnicodeDecodeError:
                pass
    return '\n'.join(parts)


def main():
    if '--cmaps' in sys.argv:
        for k, f, l in cmap_rows(sys.argv[-1] if sys.argv[-1] != '--cmaps' else '.'):
            print(k, f, l or '-')
        return
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    top = args[0] if args else '.'
    text = test_text(top)
    rows = counters(top)
    if not rows:
        sys.exit('counters: no counter found under %s' % top)
    read_names = set()
    for kind, name, pats, *fam_keys in rows:
        hit = any(re.search(p, text) for p in pats)
        # a family of toectl stats counters (fields.h) is read by their names:
        # read when they all are (test_metrics.sh checks each series
        # against toectl stats)
        if not hit and fam_keys and fam_keys[0]:
            hit = all(k in read_names for k in fam_keys[0])
        if hit:
            read_names.add(name)
        if '--all' in sys.argv:
            print(kind, name, 'read' if hit else 'unread')
        elif not hit:
            print(kind, name)


if __name__ == '__main__':
    main()
