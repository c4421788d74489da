"""Schemas mode: what rewriting schema ids on the record path costs (issue 38).

One backlog whose values are in Confluent's wire format (a zero byte, the source registry's id of one Avro schema,
then the payload; the keys are not: a random key starting with a zero byte would read as one) is copied by
sparkmirror as it is and with `sparkmirror.schemas = rewrite` between two local registries (Apicurio Registry; the
target's seeded first, so its ids differ), each copy into remote topics of its own, in the order plain, rewrite,
rewrite, plain: as in the transforms mode, a drift over the run weighs on both rows alike.
`schema_rewrite_throughput_ratio` is rewrite's records/s over plain's (0.9 or more wanted).
"""

from __future__ import annotations

import argparse
import json
import urllib.request
from collections.abc import Callable

from benchmarks import dataset
from benchmarks.replicators import SparkmirrorRunner, measure_copy
from benchmarks.transforms import combined
from sparkmirror.testing.schema_registry import LocalSchemaRegistry

PLAIN, REWRITE = "sparkmirror", "sparkmirror-schema-rewrite"
TOPIC = "registered"
ORDER = {"type": "record", "name": "Order",
         "fields": [{"name": "id", "type": "long"}, {"name": "body", "type": "bytes"}]}
SEED = {"type": "record", "name": "Seed", "fields": [{"name": "x", "type": "string"}]}


def register(url: str, subject: str, schema: dict) -> int:
    """Registers an Avro schema on a local registry; its id."""
    assert url.startswith("http://127.0.0.1:"), url  # the benchmark's own registries
    request = urllib.request.Request(f"{url}/subjects/{subject}/versions",  # noqa: S310
                                     data=json.dumps({"schema": json.dumps(schema)}).encode(),
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        return int(json.loads(response.read())["id"])


def rewriting(alias: str, source_url: str, target_url: str) -> str:
    return (f"{alias}.sparkmirror.schema.registry.url = {source_url}\n"
            f"tgt.sparkmirror.schema.registry.url = {target_url}\n{alias}->tgt.sparkmirror.schemas = rewrite\n")


def run_schemas(args: argparse.Namespace, src: str, tgt: str, figures: Callable, create: Callable,
                admins: Callable, log: Callable, timeout_s: float, result: dict) -> None:
    src_admin, tgt_admin = admins(src, tgt)
    create(src_admin, {TOPIC: args.partitions})
    rows = result.setdefault("schemas", {})
    with LocalSchemaRegistry("bench-A") as source, LocalSchemaRegistry("bench-B") as target:
        register(target.url, "seed-value", SEED)
        schema_id = register(source.url, f"{TOPIC}-value", ORDER)
        log(f"schemas: loading {args.records:,} records into '{TOPIC}' (values in the wire format, id {schema_id})")
        dataset.load(src, [TOPIC], args.partitions, args.records, args.record_size, args.seed,
                     value_prefix=b"\0" + schema_id.to_bytes(4, "big"), key_prefix=b"k")

        def runner(alias: str, settings: str = "") -> SparkmirrorRunner:
            return SparkmirrorRunner(src, tgt, args.cores, args.workdir, source_alias=alias, settings=settings)

        order = ((PLAIN, runner("plsrc")), (REWRITE, runner("rwsrc", rewriting("rwsrc", source.url, target.url))),
                 (REWRITE, runner("rw2src", rewriting("rw2src", source.url, target.url))), (PLAIN, runner("pl2src")))
        runs: dict[str, list] = {}
        for name, copy in order:
            log(f"{name}: replicating the backlog")
            run = measure_copy(copy, TOPIC, {f"{copy.source_alias}.{TOPIC}": args.partitions}, args.records,
                               tgt_admin, timeout_s)
            log(f"{name}: {figures(run, args.records, args.record_size)}")
            runs.setdefault(name, []).append(run)
    for name, done in runs.items():
        rows[name] = {**figures(combined(done), args.records * len(done), args.record_size), "copies": len(done)}


def ratios(result: dict) -> None:
    """`schema_rewrite_throughput_ratio`: records/s with the id rewrite over without, same run."""
    rows = result.get("schemas", {})
    plain, rewrite = (rows.get(name, {}).get("records_per_s") for name in (PLAIN, REWRITE))
    if plain and rewrite:
        result["schema_rewrite_throughput_ratio"] = round(rewrite / plain, 3)
