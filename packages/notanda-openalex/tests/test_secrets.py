"""A distinctive secret placed everywhere must never reach a record, a log or a message."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from conftest import (
    ALL_SECRETS,
    SECRET_ADVISOR,
    SECRET_EMAIL,
    SECRET_KEY,
    FakeClock,
    LogCapture,
    assert_no_secret,
    json_response,
    make_client,
    stored_body,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from notanda_openalex import (
    Capture,
    ConfigurationError,
    OpenAlexClient,
    ProviderResult,
    prepare_search,
)
from notanda_openalex._secrets import (
    _USERINFO_REVERSED,
    SECRET_NAMES,
    BodyLook,
    SecretScrubber,
)


def _body(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def look(scrubber: SecretScrubber, value: Any) -> BodyLook:
    """The look at *value* as a provider would send it (``json.dumps``'s spacing)."""
    return scrubber.look_at_body(_body(value))


def scrubbed(value: Any, scrubber: SecretScrubber) -> tuple[Any, Any]:
    """``(parsed, stored)``: the value parsed from *value*'s wire bytes, and it scrubbed."""
    body = value if isinstance(value, bytes) else _body(value)
    parsed = json.loads(body)
    return parsed, scrubber.scrub_parsed(parsed, scrubber.look_at_body(body))


def everything(result: ProviderResult) -> list[str | bytes]:
    return [
        json.dumps(result.observation.record_fields(), ensure_ascii=False, default=str),
        stored_body(result.observation),
        json.dumps(result.to_record(), ensure_ascii=False),
        repr(result),
        str(result.error),
    ]


def leaky_page() -> dict[str, Any]:
    return {
        "meta": {
            "count": 1,
            "x_query": {"url": f"https://api.openalex.org/works?search=x&api_key={SECRET_KEY}"},
            "mailto": SECRET_EMAIL,
            "api_key": "something-else",
        },
        "results": [
            {
                "id": "https://openalex.org/W99",
                "doi": f"https://doi.org/10.1234/{SECRET_KEY}",
                "title": f"Title with {SECRET_KEY} inside",
                "authorships": [
                    {"author": {"display_name": f"Ann {SECRET_ADVISOR}"}},
                    {"author": {"display_name": "Bob"}, "raw_author_name": SECRET_EMAIL},
                ],
                "primary_location": {"source": {"display_name": quote(SECRET_EMAIL, safe="")}},
                "open_access": {
                    "is_oa": True,
                    "oa_url": f"https://repo.example/pdf?token=abc&mailto={quote(SECRET_EMAIL)}",
                },
                "nested": [[{"Authorization": f"Bearer {SECRET_KEY}"}]],
                "abstract_inverted_index": {"Key": [0], "token": [1], SECRET_KEY: [2]},
            }
        ],
    }


def test_secret_in_body_headers_and_url(clock: FakeClock, all_logs: LogCapture) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_response(
            leaky_page(),
            200,
            {
                "X-OpenAlex-Edge-Reject": f"key {SECRET_KEY}",
                "X-RateLimit-Remaining": SECRET_ADVISOR,
                "Content-Type": f"application/json; note={quote(SECRET_EMAIL)}",
                "Retry-After": SECRET_KEY,
            },
        )

    client, recorder = make_client(handler, clock)
    result = client.search(prepare_search(f"find {SECRET_KEY} and {SECRET_EMAIL}"))
    assert result.ok
    (sent,) = recorder.requests
    assert sent.headers["authorization"] == f"Bearer {SECRET_KEY}"
    for item in everything(result):
        assert_no_secret(item)
    assert_no_secret(all_logs.text())
    body = result.observation.body_json
    work = body["results"][0]
    assert work["title"] == "Title with REDACTED inside"
    assert work["nested"] == [[{"Authorization": "REDACTED"}]]
    assert body["meta"]["mailto"] == "REDACTED"
    assert body["meta"]["api_key"] == "REDACTED"
    assert body["meta"]["x_query"]["url"].endswith("api_key=REDACTED")
    assert work["open_access"]["oa_url"] == (
        "https://repo.example/pdf?token=REDACTED&mailto=REDACTED"
    )
    # The words of an abstract are data, not field names: only the secret goes.
    assert work["abstract_inverted_index"] == {"Key": [0], "token": [1], "REDACTED": [2]}
    (citation,) = result.works
    assert citation.title == "Title with REDACTED inside"
    assert citation.authors[0].name == "Ann REDACTED"
    assert citation.authors[1].name == "Bob"
    assert citation.venue == "REDACTED"
    headers = result.observation.attempt.response_headers  # type: ignore[union-attr]
    assert headers["x-openalex-edge-reject"] == "key REDACTED"
    assert headers["x-ratelimit-remaining"] == "REDACTED"
    assert SECRET_KEY not in result.observation.attempt.url  # type: ignore[union-attr]
    assert "REDACTED" in result.observation.attempt.url  # type: ignore[union-attr]


def _answer(response: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: response


def test_secret_in_error_body_and_html(clock: FakeClock, all_logs: LogCapture) -> None:
    for response in (
        json_response({"error": "bad key", "message": f"API key {SECRET_KEY} not found"}, 401),
        httpx.Response(500, content=f"<p>trace {SECRET_KEY} {SECRET_EMAIL}</p>".encode()),
        httpx.Response(429, content=f"Insufficient budget for {SECRET_KEY}".encode()),
    ):
        client, _ = make_client(_answer(response), clock)
        result = client.search(prepare_search("q"))
        assert not result.ok
        for item in everything(result):
            assert_no_secret(item)
    assert_no_secret(all_logs.text())


@pytest.mark.parametrize(
    "exception",
    [
        httpx.ConnectError(f"cannot reach https://x/?api_key={SECRET_KEY}"),
        httpx.ReadTimeout(f"timed out {SECRET_EMAIL}"),
        OSError(f"socket said {SECRET_ADVISOR}"),
    ],
)
def test_secret_in_exception_messages(
    exception: Exception, clock: FakeClock, all_logs: LogCapture
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exception

    client, _ = make_client(handler, clock)
    result = client.search(prepare_search("q"))
    assert not result.ok
    for item in everything(result):
        assert_no_secret(item)
    assert_no_secret(all_logs.text())


def test_secret_in_a_body_stream_exception(clock: FakeClock, all_logs: LogCapture) -> None:
    class Broken(httpx.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b'{"results": ['
            raise httpx.ReadError(f"reset while sending {SECRET_KEY}")

    client, _ = make_client(lambda request: httpx.Response(200, stream=Broken()), clock)
    result = client.search(prepare_search("q"))
    assert not result.ok
    for item in everything(result):
        assert_no_secret(item)
    assert_no_secret(all_logs.text())


def test_configuration_errors_never_carry_values(tmp_path: Any, all_logs: LogCapture) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text(f'{{"openalex": {{"api_key": "{SECRET_KEY}", }}', encoding="utf-8")
    cases = [
        {"HARVESTER_CONFIG": str(bad_json)},
        {"HARVESTER_OPENALEX_ALLOW_KEYLESS": SECRET_KEY},
        {"HARVESTER_OPENALEX_PER_PAGE": SECRET_EMAIL},
        {"HARVESTER_CONFIG": str(tmp_path / SECRET_KEY)},
    ]
    for env in cases:
        with pytest.raises(ConfigurationError) as info:
            OpenAlexClient.from_core_config(env=env)
        assert_no_secret(str(info.value), repr(info.value))
        assert info.value.__cause__ is None
        assert info.value.__context__ is None
        assert "\n" not in str(info.value)
    assert_no_secret(all_logs.text())


def test_secret_named_keys_are_redacted_without_configured_secrets(clock: FakeClock) -> None:
    page = {
        "results": [],
        "debug": {"token": "t0k3n", "Access_Token": None, "EMAIL": "x@y.z", "key": 7},
        "urls": ["https://a.example/?APIKEY=v&x=1", "https://u:p@b.example/path", "ftp://x?key=1"],
    }
    client, _ = make_client(
        lambda request: json_response(page), clock, api_key=None, allow_keyless=True, secrets=()
    )
    result = client.search(prepare_search("q"))
    assert result.ok
    body = result.observation.body_json
    assert body["debug"] == {
        "token": "REDACTED",
        "Access_Token": None,
        "EMAIL": "REDACTED",
        "key": "REDACTED",
    }
    assert body["urls"] == [
        "https://a.example/?APIKEY=REDACTED&x=1",
        "https://b.example/path",
        "ftp://x?key=1",
    ]


def test_fast_path_leaves_the_body_untouched() -> None:
    page = {"results": [{"id": "https://openalex.org/W1", "title": "Clean"}], "meta": {"count": 1}}
    parsed, value = scrubbed(page, SecretScrubber([SECRET_KEY]))
    assert value is parsed


def test_only_the_affected_record_is_rebuilt() -> None:
    clean = {"id": "https://openalex.org/W1", "title": "Clean"}
    dirty = {"id": "https://openalex.org/W2", "title": SECRET_KEY}
    page = {"results": [clean, dirty]}
    parsed, value = scrubbed(page, SecretScrubber([SECRET_KEY]))
    assert value["results"][0] is parsed["results"][0]
    assert value["results"][1] == {"id": "https://openalex.org/W2", "title": "REDACTED"}


def test_secret_joined_by_cleaning_is_still_redacted(clock: FakeClock) -> None:
    split = SECRET_KEY[:5] + "\u200b" + SECRET_KEY[5:]
    page = {"results": [{"id": "https://openalex.org/W1", "title": f"see {split}"}]}
    client, _ = make_client(lambda request: json_response(page), clock)
    result = client.search(prepare_search("q"))
    assert result.works[0].title == "see REDACTED"
    for item in everything(result):
        assert_no_secret(item)


@pytest.mark.parametrize("secret", ['a","b', "1,2", "12345", "rue", "{x}", "a\\nb"])
def test_a_secret_that_could_span_json_structure_withholds_json(secret: str) -> None:
    """A walk of strings cannot remove ``a","b`` from ``["a","b"]``: only the encoder sees it."""
    assert SecretScrubber([secret]).withholds_json
    assert not SecretScrubber(["a b", "oa-x", "1.2.3.4x"]).withholds_json


def test_withheld_body_capture(clock: FakeClock) -> None:
    page = {"results": [], "x": ["a", "b"]}
    client, _ = make_client(lambda request: json_response(page), clock, secrets=['a","b'])
    result = client.search(prepare_search("q"))
    assert result.ok
    assert result.observation.capture is Capture.JSON_WITHHELD
    assert not result.observation.has_body


def test_secret_in_a_top_level_key_falls_back_to_a_full_walk() -> None:
    scrubber = SecretScrubber([SECRET_KEY])
    _, value = scrubbed({f"k{SECRET_KEY}": 1, "a": 2, "zz": 3}, scrubber)
    assert value == {"kREDACTED": 1, "a": 2, "zz": 3}


def test_redact_helper_for_request_records() -> None:
    client = OpenAlexClient(api_key=SECRET_KEY, secrets=[SECRET_EMAIL])
    record = prepare_search(f"about {SECRET_KEY}").to_record()
    redacted = client.redact(record)
    assert_no_secret(json.dumps(redacted))
    assert redacted["supplied"]["query"] == "about REDACTED"


def test_secret_forms() -> None:
    scrubber = SecretScrubber([SECRET_EMAIL])
    for form in (SECRET_EMAIL, quote(SECRET_EMAIL, safe=""), quote(SECRET_EMAIL, safe="").lower()):
        assert scrubber.scrub_text(f"<{form}>") == "<REDACTED>"
    quoted = SecretScrubber(['say "hi"\\'])
    assert quoted.contains_secret(json.dumps({"a": 'say "hi"\\'}).encode())
    assert not SecretScrubber(["", None]).has_secrets  # type: ignore[list-item]
    assert set(ALL_SECRETS) >= {SECRET_KEY}


# ------------------------------------------- the look that lets a page skip the walk


def _percent_encoded(text: str, choices: list[int]) -> str:
    """*text* with the characters picked by *choices* percent-encoded, hex case per choice."""
    out = []
    for index, char in enumerate(text):
        choice = choices[index % len(choices)] if choices else 0
        if choice == 0 or char == "%":
            out.append(quote(char, safe="") if char in "%&=#+" else char)
            continue
        hexes = "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
        out.append(hexes.lower() if choice == 2 else hexes)
    return "".join(out)


def test_a_mixed_case_percent_encoded_secret_in_a_url_is_scrubbed_from_the_body() -> None:
    # parse_qsl decodes "%6F" to "o", so the full walk redacts this URL; the old
    # per-piece look compared only whole upper- or lower-case forms and kept it.
    url = "https://example.org/landing?q=" + _percent_encoded(SECRET_KEY, [1, 0, 2])
    page = {"meta": {"count": 1}, "results": [{"id": "https://openalex.org/W1", "url": url}]}
    scrubber = SecretScrubber([SECRET_KEY])
    _, value = scrubbed(page, scrubber)
    assert value == scrubber.scrub_value(page)
    assert "REDACTED" in value["results"][0]["url"]


def test_a_percent_encoded_secret_name_in_a_url_is_redacted() -> None:
    url = "https://example.org/x?em%61il=someone%40example.org"
    page = {"results": [{"id": "https://openalex.org/W1", "url": url}]}
    scrubber = SecretScrubber()
    _, value = scrubbed(page, scrubber)
    assert value == scrubber.scrub_value(page)
    assert value != page


def test_a_kelvin_sign_key_counts_as_a_secret_name() -> None:
    page = {"results": [{"\u212aey": "value-under-a-key-named-key"}]}
    scrubber = SecretScrubber()
    assert look(scrubber, page) is BodyLook.NAMES
    _, value = scrubbed(page, scrubber)
    assert value == {"results": [{"\u212aey": "REDACTED"}]}


def test_non_ascii_characters_that_lower_to_name_characters_are_all_known() -> None:
    from notanda_openalex._secrets import _FOLDS_TO_NAME

    name_chars = set("".join(SECRET_NAMES))
    folding = {
        chr(code).encode("utf-8")
        for code in range(0x80, 0x110000)
        if not 0xD800 <= code < 0xE000 and chr(code).lower() in name_chars
    }
    assert folding == set(_FOLDS_TO_NAME)


@pytest.mark.parametrize("name", sorted(SECRET_NAMES))
def test_every_secret_name_is_seen_as_a_key_and_as_a_parameter(name: str) -> None:
    scrubber = SecretScrubber()
    for value in ({name.upper(): "v"}, {"u": f"https://h.example/?a=1&{name}=v"}):
        assert look(scrubber, value) is BodyLook.NAMES
        assert scrubber.scrub_value(value) != value


def test_a_clean_page_is_not_walked_and_keeps_its_value() -> None:
    page = {"meta": {"count": 2}, "results": [{"id": "https://openalex.org/W1", "title": "x"}]}
    scrubber = SecretScrubber([SECRET_KEY])
    assert look(scrubber, page) is BodyLook.CLEAN
    parsed, value = scrubbed(page, scrubber)
    assert value is parsed


def test_redact_returns_a_clean_record_itself() -> None:
    client = OpenAlexClient(api_key=SECRET_KEY)
    record = prepare_search("about cats").to_record()
    assert client.redact(record) is record


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f"}
_SHORT_ESCAPES |= {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _wire_string(text: str, data: st.DataObject) -> str:
    """One of the JSON spellings of *text*: any character may be escaped, any hex case."""
    out = ['"']
    for char in text:
        code = ord(char)
        if not (char in '"\\' or code < 0x20 or data.draw(st.booleans())):
            out.append(char)
        elif char in _SHORT_ESCAPES and data.draw(st.booleans()):
            out.append(_SHORT_ESCAPES[char])
        else:
            units = [code] if code <= 0xFFFF else [0xD7C0 + (code >> 10), 0xDC00 | code & 0x3FF]
            upper = data.draw(st.booleans())
            out += [f"\\u{unit:04X}" if upper else f"\\u{unit:04x}" for unit in units]
    out.append('"')
    return "".join(out)


def _wire(value: Any, data: st.DataObject) -> str:
    """One of the JSON texts of *value*: escapes as above, whitespace between tokens."""
    space = data.draw(st.sampled_from(["", " ", "\n  "]))
    if isinstance(value, dict):
        members = [
            f"{space}{_wire_string(key, data)}{space}:{space}{_wire(item, data)}"
            for key, item in value.items()
        ]
        return "{" + ",".join(members) + space + "}"
    if isinstance(value, list):
        return "[" + ",".join(space + _wire(item, data) for item in value) + space + "]"
    if isinstance(value, str):
        return _wire_string(value, data)
    return json.dumps(value)


_SECRETS = st.text(st.characters(exclude_categories=("Cs",)), min_size=3, max_size=12)


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(
    secret=_SECRETS,
    place=st.sampled_from(["text", "url", "key"]),
    choices=st.lists(st.integers(0, 2), min_size=1, max_size=4),
    data=st.data(),
)
def test_no_json_or_url_spelling_of_a_secret_gets_past_the_look(
    secret: str, place: str, choices: list[int], data: st.DataObject
) -> None:
    """Whatever escapes carry a secret on the wire, the look says "may contain"."""
    work: dict[str, Any] = {"id": "https://openalex.org/W1"}
    if place == "text":
        work["title"] = f"about {secret} and more"
    elif place == "url":
        work["landing_page_url"] = "https://example.org/p?q=" + _percent_encoded(secret, choices)
    else:
        work["extra"] = {f"x{secret}": 1}
    page = {"meta": {"count": 1}, "results": [work]}
    wire = _wire(page, data).encode("utf-8")
    scrubber = SecretScrubber([secret])
    assert scrubber.look_at_body(wire) is BodyLook.SECRETS
    parsed, value = scrubbed(wire, scrubber)
    assert value == scrubber.scrub_value(parsed)
    if not scrubber.withholds_json:
        assert not scrubber.contains_secret(_body(value))


_WORDS = st.sampled_from(
    [
        "https://h.example/p?",
        "http://u:p@h/",
        "email",
        "Key",
        "mailto",
        "=",
        "&",
        "%",
        "6F",
        "41",
        "%2",
        "\u212a",
        "@",
        "+",
        " ",
        "oa",
        "-x",
        '"',
        "word",
        "é",
        "\U0001f600",
    ]
)
_TEXTS = st.one_of(st.text(max_size=8), st.lists(_WORDS, max_size=8).map("".join))
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _TEXTS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_TEXTS, inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(derandomize=True, max_examples=300, deadline=None, database=None)
@given(value=_VALUES, secret=st.sampled_from(["oa-x", "oa x", "é oa", 'a"b"c']))
def test_when_the_look_finds_nothing_the_walk_would_change_nothing(value: Any, secret: str) -> None:
    scrubber = SecretScrubber([secret])
    if look(scrubber, value) is BodyLook.CLEAN:
        assert scrubber.scrub_value(value) == value
    parsed, stored = scrubbed(value, scrubber)
    assert stored == scrubber.scrub_value(parsed)


def test_an_at_sign_outside_a_url_host_does_not_cost_a_walk() -> None:
    page = {
        "results": [
            {"source": "Repository@Nottingham", "url": "https://h.example/a@b?x=1"},
            {"url": "https://user:pw@h.example/"},
        ]
    }
    scrubber = SecretScrubber()
    assert look(scrubber, page["results"][0]) is BodyLook.CLEAN
    assert look(scrubber, page["results"][1]) is BodyLook.NAMES
    assert look(scrubber, {"u": 'https://a\\"b@h.example/'}) is BodyLook.NAMES
    _, value = scrubbed(page, scrubber)
    assert value == scrubber.scrub_value(page)
    assert value["results"][1]["url"] == "https://h.example/"


# A body whose escapes spell what the literal bytes do not: each must be walked.
# Each case leaks (the look says "clean") if the look ignores JSON escapes.
_ESCAPED_BODIES = [
    pytest.param(
        b'{"results":[{"title":"about oa-SECRET-kq7\\u005ax9Wv3Lm2"}]}',
        ["results", 0, "title"],
        "about REDACTED",
        id="secret-character-as-uXXXX",
    ),
    pytest.param(
        b'{"results":[{"title":"owner+alerts\\u0040secret-mail.example"}]}',
        ["results", 0, "title"],
        "REDACTED",
        id="at-sign-of-an-email-as-uXXXX",
    ),
    pytest.param(
        b'{"results":[{"api_ke\\u0079":"v"}]}',
        ["results", 0, "api_key"],
        "REDACTED",
        id="secret-named-key-written-with-an-escape",
    ),
    pytest.param(
        b'{"results":[{"url":"https:\\/\\/user:pw@h.example\\/p"}]}',
        ["results", 0, "url"],
        "https://h.example/p",
        id="userinfo-behind-escaped-slashes",
    ),
    pytest.param(
        b'{"results":[{"url":"https://h.example/?em\\u0061il=someone"}]}',
        ["results", 0, "url"],
        "https://h.example/?email=REDACTED",
        id="secret-named-parameter-written-with-an-escape",
    ),
    pytest.param(
        b'{"results":[{"title":"bad \\ud83d here"}]}',
        ["results", 0, "title"],
        "bad \ufffd here",
        id="lone-surrogate-escape",
    ),
]


@pytest.mark.parametrize(("body", "path", "expected"), _ESCAPED_BODIES)
def test_a_body_whose_escapes_hide_a_secret_or_a_name_is_walked(
    body: bytes, path: list[Any], expected: str
) -> None:
    scrubber = SecretScrubber([SECRET_KEY, SECRET_EMAIL])
    assert scrubber.look_at_body(body) is not BodyLook.CLEAN
    _, value = scrubbed(body, scrubber)
    for step in path:
        value = value[step]
    assert value == expected


def test_escapes_of_characters_no_rule_cares_about_keep_the_fast_path() -> None:
    body = b'{"results":[{"title":"caf\\u00e9 \\"quoted\\" \\n line","n":1}]}'
    scrubber = SecretScrubber([SECRET_KEY, SECRET_EMAIL])
    assert scrubber.look_at_body(body) is BodyLook.CLEAN
    parsed, value = scrubbed(body, scrubber)
    assert value is parsed


def test_a_search_parses_the_body_once(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from notanda_openalex import _outcome

    calls: list[int] = []
    real = json.loads

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_outcome.json, "loads", counting)
    client, _ = make_client(lambda request: json_response(leaky_page()), clock)
    result = client.search(prepare_search("q"))
    assert result.ok
    assert len(calls) == 1


# The encoded secret starts 27 bytes after the offset; these straddle 64 KiB.
@pytest.mark.parametrize("offset", [0, 65_480, 65_500, 65_508, 131_040])
def test_a_percent_encoded_secret_is_found_across_the_decoding_windows(offset: int) -> None:
    """The look undoes percent escapes in overlapping windows; no place falls between them."""
    encoded = _percent_encoded(SECRET_KEY, [1, 2])
    body = ('{"u":"' + "x" * offset + "https://h.example/?q=" + encoded + '"}').encode()
    scrubber = SecretScrubber([SECRET_KEY])
    assert SECRET_KEY.encode() not in body
    assert scrubber.look_at_body(body) is BodyLook.SECRETS
    assert scrubber.look_at_body(bytearray(body)) is BodyLook.SECRETS


# ------------------------------------------------ the walk's shortcuts (issue 23)


def _rules(scrubber: SecretScrubber, value: Any, *, words: bool, names_only: bool) -> Any:
    """The rules of ``scrub_value`` and the name rules, applied to every node: no shortcut."""
    if isinstance(value, str):
        text = value
        if not names_only:
            text = scrubber.scrub_text(value)
        elif "=" not in value and "@" not in value:
            return value
        if text[:8].lower().startswith(("http://", "https://")):
            text = scrubber.scrub_url(text)
        return text
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            new_key = key if names_only else scrubber.scrub_text(key)
            if not words and key.lower() in SECRET_NAMES and item is not None:
                out[new_key] = "REDACTED"
            else:
                nested = key == "abstract_inverted_index" and isinstance(item, dict)
                out[new_key] = _rules(scrubber, item, words=nested, names_only=names_only)
        return out
    if isinstance(value, list):
        return [_rules(scrubber, item, words=False, names_only=names_only) for item in value]
    return value


_INDEX = st.dictionaries(
    _TEXTS,
    st.lists(st.one_of(st.integers(), st.floats(allow_nan=False), st.none(), _TEXTS), max_size=3),
    max_size=4,
)
_PAGES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _TEXTS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            _TEXTS | st.sampled_from(["abstract_inverted_index", "key"]), inner, max_size=4
        ),
        st.fixed_dictionaries({"abstract_inverted_index": _INDEX | inner}),
    ),
    max_leaves=16,
)


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(value=_PAGES, secret=st.sampled_from(["oa-x", "oa x", "é oa", "41"]))
def test_the_walk_with_its_shortcuts_applies_every_rule_to_every_node(
    value: Any, secret: str
) -> None:
    """Numbers, plain strings and an abstract's index of numbers are skipped, never missed."""
    scrubber = SecretScrubber([secret])
    for look_found, names_only in ((BodyLook.SECRETS, False), (BodyLook.NAMES, True)):
        expected = _rules(scrubber, value, words=False, names_only=names_only)
        got = scrubber.scrub_parsed(value, look_found)
        assert got == expected
        assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
        if got == value:  # nothing changed: the value itself comes back, shared
            assert got is value


#: The userinfo rule as written forwards; the look searches it over the reversed bytes.
_USERINFO_FORWARD = re.compile(rb'://(?:[^/?#@"\\]|\\.)*@')


@settings(derandomize=True, max_examples=2000, deadline=None, database=None)
@given(
    data=st.lists(
        st.sampled_from(
            [b":", b"/", b"//", b"://", b"@", b"?", b"#", b'"', b"\\", b"\n", b"a", b"\\\\"]
        ),
        max_size=16,
    ).map(b"".join)
)
def test_the_reversed_userinfo_pattern_finds_what_the_forward_one_finds(data: bytes) -> None:
    assert (_USERINFO_REVERSED.search(data[::-1]) is None) is (
        _USERINFO_FORWARD.search(data) is None
    )
