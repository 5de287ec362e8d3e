#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The exposition invariants of --output openmetrics, checked on a tool's
stdout (promtool check metrics is only a lint), and its values read out.

  om_check.py check FILE [--text004]
      FILE is nothing but whole expositions, each ending "# EOF": every
      line a sample or a HELP, TYPE, UNIT line; every family has HELP and
      TYPE before its samples, which are together; no sample twice;
      label values escaped as the format says (\\\\, \\", \\n only) and
      valid UTF-8; counters not negative; each histogram series with
      buckets whose le are unique and increasing, counts cumulative, +Inf
      last and equal to _count, _sum not negative; every series of a
      histogram family with the same le set, in every exposition.
  om_check.py value FILE SAMPLE [LABEL=VALUE...]
      The value of SAMPLE with exactly these labels (values as bytes) in
      FILE's last exposition; "none" if there is no such sample.
  om_check.py values FILE SAMPLE [LABEL=VALUE...]
      The same in every exposition, one a line ("none" where absent).
  om_check.py series FILE SAMPLE
      How many samples SAMPLE has (label sets) in the last exposition.
"""
import math
import os
import re
import sys

SAMPLE = re.compile(rb'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
NAME = re.compile(rb'^[a-zA-Z_][a-zA-Z0-9_]*$')


class Bad(Exception):
    pass


def labels_of(text):
    """{name: value} of a label text `a="x",b="y"`, as bytes."""
    out, i = {}, 0
    while i < len(text):
        eq = text.index(b'=', i)
        name = text[i:eq]
        if not NAME.match(name) or text[eq + 1:eq + 2] != b'"':
            raise Bad('bad label at %r' % text[i:])
        j, value = eq + 2, bytearray()
        while True:
            if j >= len(text):
                raise Bad('unterminated label value in %r' % text)
            c = text[j:j + 1]
            if c == b'"':
                break
            if c == b'\\':
                esc = text[j + 1:j + 2]
                if esc not in (b'\\', b'"', b'n'):
                    raise Bad('escape \\%s in a label value: %r' % (esc.decode(), text))
                value += b'\n' if esc == b'n' else esc
                j += 2
                continue
            if c == b'\n':
                raise Bad('raw newline in a label value')
            value += c
            j += 1
        if name in out:
            raise Bad('label %r twice' % name)
        bytes(value).decode('utf-8')
        out[name] = bytes(value)
        i = j + 1
        if i < len(text):
            if text[i:i + 1] != b',':
                raise Bad('no comma after a label in %r' % text)
            i += 1
    return out


def expositions(data):
    if not data.endswith(b'# EOF\n'):
        raise Bad('the output does not end with "# EOF": %r' % data[-80:])
    parts = data.split(b'# EOF\n')
    return [p.split(b'\n')[:-1] for p in parts[:-1]]


def family_of(name, families, text004):
    for suffix, types in ((b'_total', ('counter',)), (b'_bucket', ('histogram',)),
                          (b'_sum', ('histogram',)), (b'_count', ('histogram',)), (b'', ())):
        if not name.endswith(suffix):
            continue
        base = name[:len(name) - len(suffix)] if suffix else name
        if text004 and suffix == b'_total':
            base = name
        if base in families and (not types or families[base]['type'] in types):
            return base
    raise Bad('sample %r of no declared family' % name)


def check_histogram(fam, series, sets):
    """sets: {family: its le set}, kept from one exposition to the next."""
    for key, s in series.items():
        bounds = s.get('buckets', [])
        les = [b[0] for b in bounds]
        if les != sets.setdefault(fam, les):
            raise Bad('%s%s: le %r, another series %r' % (fam, key, les, sets[fam]))
        if not bounds or bounds[-1][0] != math.inf:
            raise Bad('%s%s: no +Inf bucket last' % (fam, key))
        if any(a >= b for a, b in zip(les, les[1:])):
            raise Bad('%s%s: le not unique and increasing: %r' % (fam, key, les))
        counts = [b[1] for b in bounds]
        if any(a > b for a, b in zip(counts, counts[1:])):
            raise Bad('%s%s: buckets not cumulative: %r' % (fam, key, counts))
        if 'count' not in s or s['count'] != counts[-1]:
            raise Bad('%s%s: +Inf %s, _count %s' % (fam, key, counts[-1], s.get('count')))
        if s.get('sum', -1) < 0:
            raise Bad('%s%s: _sum %s' % (fam, key, s.get('sum')))


def check_one(lines, text004, les):
    families, order, seen = {}, [], set()
    hist = {}
    for line in lines:
        if line.startswith(b'#'):
            parts = line.split(b' ', 3)
            if len(parts) < 4 or parts[1] not in (b'HELP', b'TYPE', b'UNIT'):
                raise Bad('not a HELP, TYPE or UNIT line: %r' % line)
            if text004 and parts[1] == b'UNIT':
                raise Bad('# UNIT in 0.0.4')
            f = families.setdefault(parts[2], {'type': None})
            if f.get('samples'):
                raise Bad('%s after the samples of its family' % line)
            key = parts[1].decode()
            if key in f:
                raise Bad('%s twice' % line)
            f[key] = parts[3]
            if key == 'TYPE':
                f['type'] = parts[3].decode()
            continue
        m = SAMPLE.match(line)
        if not m:
            raise Bad('not a sample: %r' % line)
        name, labels, value = m.group(1), labels_of(m.group(3) or b''), float(m.group(4))
        fam = family_of(name, families, text004)
        f = families[fam]
        if 'HELP' not in f or 'TYPE' not in f:
            raise Bad('family %r without HELP or TYPE' % fam)
        if order and order[-1] != fam and fam in order:
            raise Bad('samples of %r not together' % fam)
        if not order or order[-1] != fam:
            order.append(fam)
        f['samples'] = True
        ident = (name, tuple(sorted(labels.items())))
        if ident in seen:
            raise Bad('sample twice: %r' % line)
        seen.add(ident)
        if f['type'] == 'counter' and value < 0:
            raise Bad('negative counter: %r' % line)
        if f['type'] == 'histogram':
            le = labels.pop(b'le', None)
            s = hist.setdefault(fam, {}).setdefault(tuple(sorted(labels.items())), {})
            if name.endswith(b'_bucket'):
                s.setdefault('buckets', []).append((float(le.decode()), value))
            elif name.endswith(b'_sum'):
                s['sum'] = value
            else:
                s['count'] = value
    for fam, series in hist.items():
        check_histogram(fam.decode(), series, les)


def find(lines, sample, want):
    for line in lines:
        m = SAMPLE.match(line)
        if m and m.group(1) == sample and labels_of(m.group(3) or b'') == want:
            v = m.group(4).decode()
            return v
    return 'none'


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path, 'rb') as f:
        data = f.read()
    try:
        expo = expositions(data)
        if mode == 'check':
            les = {}
            for n, lines in enumerate(expo, 1):
                try:
                    check_one(lines, '--text004' in sys.argv[3:], les)
                except Bad as e:
                    raise Bad('exposition %d: %s' % (n, e))
            return 0
        sample = os.fsencode(sys.argv[3])
        want = dict(os.fsencode(a).split(b'=', 1) for a in sys.argv[4:])
        if mode == 'value':
            print(find(expo[-1], sample, want))
        elif mode == 'values':
            for lines in expo:
                print(find(lines, sample, want))
        elif mode == 'series':
            print(sum(1 for line in expo[-1] if SAMPLE.match(line) and
                      SAMPLE.match(line).group(1) == sample))
        return 0
    except (Bad, ValueError, UnicodeDecodeError) as e:
        print('%s: %s' % (path, e), file=sys.stderr)
        return 1


sys.exit(main())
