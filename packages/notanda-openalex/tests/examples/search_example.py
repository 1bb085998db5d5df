"""Search OpenAlex once, print citations, and build the provider record to keep."""

from __future__ import annotations

import json
from datetime import datetime

from notanda_openalex import InputError, OpenAlexClient, prepare_search


def main(client: OpenAlexClient) -> int:
    """Run one search with *client* and print what came back."""
    try:
        request = prepare_search(
            "Does exercise improve sleep quality?",
            limit=3,
            filters={"from_year": 2015, "oa_status": ["gold", "diamond", "green"]},
        )
    except InputError as exc:
        print(f"rejected {exc.field}: {exc.reason}")
        return 2
    print(f"searching for: {request.effective.query}")

    result = client.search(request)

    # What the provider said, secrets redacted, as values: store it next to the
    # results. The attempt's times are aware datetimes; the MCP server writes them
    # with notanda-evidence's format_timestamp and hands the record to its writer,
    # which encodes it.
    observation = result.observation
    provider_record = {**observation.record_fields(), "observed_json": observation.body_json}
    text = json.dumps(provider_record, ensure_ascii=False, default=datetime.isoformat)
    print(f"provider record: {len(text)} characters")

    if result.error is not None:
        print(f"failed: {json.dumps(result.error.to_record(), sort_keys=True)}")
        return 1
    print(f"{result.total_count} matching works; showing {len(result.works)}")
    for work in result.works:
        shown = work.authors[:3]
        names = ", ".join(author.name or "[unnamed]" for author in shown) or "[no authors listed]"
        others = " and others" if (work.authors_total or 0) > len(shown) else ""
        venue = f" {work.venue}." if work.venue else ""
        doi = f" https://doi.org/{work.doi}" if work.doi else ""
        retracted = " [RETRACTED]" if work.is_retracted else ""
        print(f"- {names}{others} ({work.publication_year}). {work.title}.{venue}{doi}{retracted}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(OpenAlexClient.from_core_config()))
