"""Read a bibliography into references, without contacting anything."""

from __future__ import annotations

from notanda_openalex import ReferenceInputError, parse_references

BIBLIOGRAPHY = r"""
@string{nat = "Nature"}
@article{okafor2021,
  author  = {Okafor, Chidi and M{\"u}ller, J{\"o}rg and others},
  title   = {Sleep Spindles in {\'E}lite Athletes},
  journal = nat, year = 2021,
  doi     = {https://doi.org/10.1038/S41586-021-00001-X}
}
@misc{ferreira2023,
  author = {Ana Ferreira}, title = {A Survey of Sparse Attention},
  eprint = {2303.01234v3}, archivePrefix = {arXiv}, year = 2023
}
@article{broken, title = {Unbalanced {brace, year = 2020}
"""


def main(text: str = BIBLIOGRAPHY) -> int:
    """Parse *text* and print one line per reference."""
    try:
        parsed = parse_references(text)
    except ReferenceInputError as exc:
        print(f"refused {exc.field}: {exc.reason} (limit {exc.limit})")
        return 2
    print(f"{len(parsed)} references read as {parsed.format}")
    for ref in parsed:
        if not ref.parsed:
            print(f"[{ref.index}] {ref.key}: unparsed ({ref.unparsed_reason})")
            continue
        names = "; ".join(f"{a.family}, {a.given}" for a in ref.authors)
        more = " et al." if ref.authors_truncated else ""
        print(f"[{ref.index}] {ref.key}: {names}{more} ({ref.year}) {ref.title}")
        print(f"    look up: {ref.lookup_doi}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
