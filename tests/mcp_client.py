"""A real MCP client (the Python `mcp` SDK) driving `strata mcp`, for tests/mcp.rs.

usage: mcp_client.py stdio STRATA DATA MODE [STRATA ARGS...] | mcp_client.py http URL MODE

MODE is `scenario` (everything below), `fail-open` (recall with the vector server down),
`shadow` (over HTTP, a server in shadow mode: recalls hand back nothing; then /metrics, read
by the Prometheus client library's text parser) or `read-only` (over HTTP with a read-only
token: reads answer, record_incident and correct_memory are neither listed nor accepted).

Over HTTP, STRATA_TEST_TOKEN (when set) is sent as `Authorization: Bearer`, and STRATA_TEST_CA
(when set) is the only CA trusted for https.

The store holds INC-A (ingested by the CLI at 2026-11-25T00:00:00Z); the server's clock is
2026-12-01T00:00:00Z. Every check is an assert; the last line printed is a JSON summary.
"""

import asyncio
import json
import os
import ssl
import sys
import urllib.request

import httpx2
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

BEFORE = "2026-11-28T00:00:00Z"  # after INC-A was recorded, before INC-B was
NOW = "2026-12-01T00:00:00Z"
HOSTILE_FP = "INC-'\";MATCH (n) DETACH DELETE n//"
HOSTILE_TEXT = (
    "it's \"quoted\"'; MATCH (n) DETACH DELETE n // $param {{x}} \\ "
    "\u001b[2J\u001b]0;title\u0007 bell\r\nnext\tline ünïcödé 🚨 \u202e reversed"
)

RECORD_B = {
    "incident_fingerprint": "INC-B",
    "summary_nl": "checkout latency spike: connection pool exhausted after the quokka deploy",
    "resolution_nl": "raised the pool size and rolled back the quokka deploy",
    "concluded_at": "2026-11-30T12:00:00Z",
    "t_valid": "2026-11-30T10:00:00Z",
    "mentions": [{"entity_type": "service", "entity_ref": "checkout"}],
    "resolved_by": [{"entity_type": "change", "entity_ref": "pool-size-64"}],
    "supersedes": [
        {
            "incident_fingerprint": "INC-A",
            "entity_type": "change",
            "entity_ref": "pool-size-32",
        }
    ],
    "provenance": {"source": "mcp-test", "status": "concluded", "confidence_score": 0.9},
    "code_units": [{"repo": "shop", "path": "checkout/pool.rs", "service": "checkout"}],
}


def structured(result):
    assert not result.is_error, result.content
    return result.structured_content


def fingerprints(recall):
    return [r["fingerprint"] for r in recall["results"]]


async def scenario(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {
        "recall",
        "record_incident",
        "facts",
        "lineage",
        "lesson",
        "skills",
        "timeline",
        "code",
        "correct_memory",
    }, sorted(tools)
    assert {"reason", "by"} <= set(tools["correct_memory"].input_schema["properties"])
    assert tools["correct_memory"].annotations.destructive_hint is False
    recall_props = set(tools["recall"].input_schema["properties"])
    assert recall_props == {"query", "entities", "k", "valid_at", "known_at", "legs", "fusion", "stale"}, recall_props
    assert tools["recall"].input_schema["required"] == ["query"]
    record = tools["record_incident"].input_schema
    for field in ("incident_fingerprint", "summary_nl", "resolution_nl", "concluded_at", "supersedes", "skills", "code_units"):
        assert field in record["properties"], field
    assert set(record["required"]) == {"incident_fingerprint", "summary_nl", "resolution_nl", "concluded_at"}
    for name in ("facts", "lineage", "lesson"):
        assert set(tools[name].input_schema["properties"]) == {"fingerprint", "valid_at", "known_at"}, name
    # Each answer's schema is the one of the type the CLI's --json prints.
    for name, tool in tools.items():
        assert tool.output_schema and tool.output_schema.get("type") == "object", name
    assert {"query", "legs", "results", "skills", "brief", "weights", "stale", "latency_ms"} <= set(
        tools["recall"].output_schema["properties"]
    )
    assert {"episode", "facts"} <= set(tools["facts"].output_schema["properties"])
    assert {"new_episodes", "unchanged_episodes"} <= set(tools["record_incident"].output_schema["properties"])
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["record_incident"].annotations.destructive_hint is False

    # A malformed record: a tool error naming the field, and nothing written.
    bad = dict(RECORD_B, incident_fingerprint="INC-BAD", concluded_at="yesterday")
    bad["mentions"] = [{"entity_type": "service"}]
    refused = await client.call_tool("record_incident", bad)
    assert refused.is_error
    fields = {e["field"] for e in refused.structured_content["errors"]}
    assert "concluded_at" in fields and "mentions[0].entity_ref" in fields, fields
    assert "nothing was written" in refused.content[0].text
    unknown = await client.call_tool("record_incident", dict(RECORD_B, incident_fingerprint="INC-BAD", severity="high"))
    assert unknown.is_error and "severity" in unknown.content[0].text, unknown.content

    # The incident that supersedes INC-A.
    applied = structured(await client.call_tool("record_incident", RECORD_B))
    assert applied["new_episodes"] == 1 and applied["new_supersessions"] == 1, applied
    again = structured(await client.call_tool("record_incident", RECORD_B))
    assert again["new_episodes"] == 0 and again["unchanged_episodes"] == 1, again

    timeline = structured(await client.call_tool("timeline", {"limit": 50}))
    assert "INC-BAD" not in [e["incident_fingerprint"] for e in timeline["episodes"]]

    query = {"query": "checkout connection pool exhausted", "entities": ["service:checkout"], "k": 5}
    before = structured(await client.call_tool("recall", dict(query, known_at=BEFORE)))
    after = structured(await client.call_tool("recall", query))
    assert "INC-B" not in fingerprints(before), fingerprints(before)
    assert "INC-A" in fingerprints(before), fingerprints(before)
    assert "INC-B" in fingerprints(after), fingerprints(after)
    for leg in ("semantic", "bm25", "graph"):
        assert after["legs"][leg]["status"] == "ok", after["legs"]
        assert after["legs"][leg]["latency_ms"] >= 0
    top = next(r for r in after["results"] if r["fingerprint"] == "INC-B")
    assert top["rrf_score"] > 0 and top["legs_hit"] >= 1, top
    # Each leg says how sure it was and the weight it counted with; each rank its weight.
    for leg in ("semantic", "bm25", "graph"):
        assert 0 <= after["legs"][leg]["confidence"]["value"] <= 1, after["legs"][leg]
        assert after["legs"][leg]["weight"] >= 0
    assert after["fusion"] == "adaptive" and after["stale"] == "mark"
    for r in after["results"]:
        for rank in filter(None, r["per_leg"].values()):
            assert abs(rank["contribution"] - rank["weight"] / (60 + rank["rank"])) < 1e-12, rank
    # What still holds: INC-B superseded INC-A's fix, as known now, not before.
    old = next((r for r in after["results"] if r["fingerprint"] == "INC-A"), None)
    if old is not None:
        assert old["superseded_by"][0]["episode"] == "INC-B", old
        assert old["current_successor"]["fingerprint"] == "INC-B", old
    assert "superseded" in after["brief"] and "INC-B" in after["brief"], after["brief"]
    was = next(r for r in before["results"] if r["fingerprint"] == "INC-A")
    assert was["superseded_by"] == [] and "current_successor" not in was, was
    assert "superseded" not in before["brief"], before["brief"]
    shadow = structured(await client.call_tool("recall", dict(query, stale="follow")))
    order = fingerprints(shadow)
    if "INC-A" in order and order.index("INC-A") + 1 < len(order):
        assert order.index("INC-B") <= order.index("INC-A") + 1, order

    # INC-A's fact about pool-size-32 as known before INC-B, and after.
    def pool_fact(report):
        return next(f for f in report["facts"] if f["entity_ref"] == "pool-size-32")

    facts_before = structured(await client.call_tool("facts", {"fingerprint": "INC-A", "known_at": BEFORE}))
    facts_after = structured(await client.call_tool("facts", {"fingerprint": "INC-A"}))
    assert pool_fact(facts_before)["superseded_by"] is None, pool_fact(facts_before)
    assert pool_fact(facts_after)["superseded_by"] == "INC-B", pool_fact(facts_after)
    assert pool_fact(facts_after)["state"] != pool_fact(facts_before)["state"]

    lineage = structured(await client.call_tool("lineage", {"fingerprint": "INC-B"}))
    assert any(l["prior"] == "INC-A" for l in lineage["backwards"]), lineage
    lesson = structured(await client.call_tool("lesson", {"fingerprint": "INC-A"}))
    assert lesson["superseded_by"] == "INC-B", lesson
    code = structured(await client.call_tool("code", {"service": "checkout"}))
    assert [u["path"] for u in code["code_units"]] == ["checkout/pool.rs"], code
    missing = await client.call_tool("facts", {"fingerprint": "INC-NOPE"})
    assert missing.is_error and "INC-NOPE" in missing.content[0].text

    # Hostile strings are data: they come back byte for byte.
    hostile = dict(
        RECORD_B,
        incident_fingerprint=HOSTILE_FP,
        summary_nl=HOSTILE_TEXT,
        resolution_nl=HOSTILE_TEXT,
        supersedes=[],
        code_units=[],
        mentions=[{"entity_type": "service", "entity_ref": "it's \"odd\" ) RETURN 1 //"}],
    )
    structured(await client.call_tool("record_incident", hostile))
    episodes = structured(await client.call_tool("timeline", {"limit": 50}))["episodes"]
    stored = next(e for e in episodes if e["incident_fingerprint"] == HOSTILE_FP)
    assert stored["summary_nl"] == HOSTILE_TEXT, repr(stored["summary_nl"])
    assert stored["resolution_nl"] == HOSTILE_TEXT
    hostile_facts = structured(await client.call_tool("facts", {"fingerprint": HOSTILE_FP}))
    assert [f["entity_ref"] for f in hostile_facts["facts"] if f["relation"] == "MENTIONS"] == [
        "it's \"odd\" ) RETURN 1 //"
    ], hostile_facts

    # Resources: the summary and episodes by fingerprint, the hostile one included.
    resources = {r.uri: r for r in (await client.list_resources()).resources}
    assert "strata://store" in resources, list(resources)
    summary = json.loads((await client.read_resource("strata://store")).contents[0].text)
    assert summary["episodes"] >= 2 and summary["supersedes"] >= 1, summary
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["strata://episode/{fingerprint}"]
    hostile_uri = next(u for u, r in resources.items() if r.name == HOSTILE_FP)
    read = json.loads((await client.read_resource(hostile_uri)).contents[0].text)
    assert read["episode"]["summary_nl"] == HOSTILE_TEXT
    episode_b = json.loads((await client.read_resource("strata://episode/INC-B")).contents[0].text)
    assert episode_b["episode"]["incident_fingerprint"] == "INC-B"

    return {
        "tools": sorted(tools),
        "recall_before": fingerprints(before),
        "recall_after": fingerprints(after),
        "fact_state_before": pool_fact(facts_before)["state"],
        "fact_state_after": pool_fact(facts_after)["state"],
        "resources": len(resources),
    }


async def fail_open(client):
    """The semantic leg's server is down: recall still answers, saying which leg failed."""
    answer = structured(
        await client.call_tool("recall", {"query": "checkout connection pool exhausted", "entities": ["service:checkout"]})
    )
    legs = answer["legs"]
    assert legs["semantic"]["status"] in ("failed", "timeout"), legs
    assert legs["semantic"]["error"], legs
    assert legs["bm25"]["status"] == "ok" and legs["graph"]["status"] == "ok", legs
    assert "INC-A" in fingerprints(answer), answer
    return {"legs": {k: v["status"] for k, v in legs.items()}, "results": fingerprints(answer)}


SHADOW_QUERIES = [
    "checkout connection pool exhausted",
    "checkout errors under load",
    "pool size too small for checkout",
]


async def shadow(client, url):
    """Shadow mode: every recall runs and is counted, none hands back what it found."""
    withheld = []
    for query in SHADOW_QUERIES:
        answer = structured(await client.call_tool("recall", {"query": query, "entities": ["service:checkout"]}))
        assert answer["mode"] == "shadow", answer
        assert answer["results"] == [] and answer["skills"] == [], answer
        assert "INC-A" not in json.dumps(answer), answer
        assert {leg["status"] for leg in answer["legs"].values()} == {"ok"}, answer["legs"]
        withheld.append(answer["withheld"])
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url.rsplit("/", 1)[0] + "/metrics") as response:
        content_type = response.headers["Content-Type"]
        text = response.read().decode()
    samples = [
        {"name": s.name, "labels": s.labels, "value": s.value}
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]
    return {"withheld": withheld, "content_type": content_type, "samples": samples}


async def read_only(client):
    """A read-only token: every read answers; record_incident is not listed and is refused."""
    tools = {t.name for t in (await client.list_tools()).tools}
    assert not {"record_incident", "correct_memory"} & tools and "recall" in tools, sorted(tools)
    try:
        await client.call_tool("record_incident", RECORD_B)
    except MCPError as refused:
        error = {"code": refused.code, "message": refused.message, "data": refused.data}
    else:
        raise AssertionError("a read-only token recorded an incident")
    try:
        await client.call_tool("correct_memory", {"incident_fingerprint": "INC-A"})
    except MCPError as refused:
        assert "correct_memory writes to memory" in refused.message, refused.message
    else:
        raise AssertionError("a read-only token corrected memory")
    answer = structured(
        await client.call_tool("recall", {"query": "checkout connection pool exhausted", "entities": ["service:checkout"]})
    )
    timeline = structured(await client.call_tool("timeline", {"limit": 50}))
    return {
        "tools": sorted(tools),
        "refused": error,
        "recall": fingerprints(answer),
        "timeline": [e["incident_fingerprint"] for e in timeline["episodes"]],
    }


def http_transport(url):
    """Streamable HTTP with the test's token and CA, when given."""
    headers = {}
    if os.environ.get("STRATA_TEST_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["STRATA_TEST_TOKEN"]
    verify = True
    if os.environ.get("STRATA_TEST_CA"):
        verify = ssl.create_default_context(cafile=os.environ["STRATA_TEST_CA"])
    http = httpx2.AsyncClient(headers=headers, verify=verify, timeout=httpx2.Timeout(30, read=300))
    return streamable_http_client(url, http_client=http)


async def main():
    transport = sys.argv[1]
    if transport == "stdio":
        strata, data, mode = sys.argv[2], sys.argv[3], sys.argv[4]
        server = StdioServerParameters(
            command=strata,
            args=["--data", data, "--now", NOW, *sys.argv[5:], "mcp"],
            env={"STRATA_EMBEDDER": "hash", "PATH": "/usr/bin:/bin"},
        )
        transport = server
    else:
        server, mode = sys.argv[2], sys.argv[3]
        transport = http_transport(server)
    async with Client(transport) as client:
        if mode == "scenario":
            summary = await scenario(client)
        elif mode == "shadow":
            summary = await shadow(client, server)
        elif mode == "read-only":
            summary = await read_only(client)
        else:
            summary = await fail_open(client)
    print(json.dumps(summary))


asyncio.run(main())
