import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { InvalidArgumentError, MAX_CRON_AFTER_MS, parseCron } from "@rwq-protocol/rwq";

// Profile periodic's cron walk against every vector of conformance/vectors/cron.json.

interface Vector {
  id: string;
  expr: string;
  tz: string;
  after_ms?: number;
  next_ms?: number[];
  refused?: string;
}

const vectors: Vector[] = JSON.parse(
  readFileSync(new URL("../../../conformance/vectors/cron.json", import.meta.url), "utf8"),
).vectors;

describe("cron vectors", () => {
  test("the file has vectors", () => assert.ok(vectors.length >= 100));
  for (const v of vectors) {
    test(v.id, () => {
      if (v.refused !== undefined) {
        assert.throws(() => parseCron(v.expr, v.tz), (err: unknown) =>
          err instanceof InvalidArgumentError && /RWQ-SCHED-00[147]/.test(err.message));
        return;
      }
      const s = parseCron(v.expr, v.tz);
      const got: number[] = [];
      let after = v.after_ms!;
      for (let i = 0; i < v.next_ms!.length; i++) got.push((after = s.nextSlot(after)));
      assert.deepEqual(got, v.next_ms);
    });
  }
});

test("nextSlot refuses instants out of range", () => {
  const s = parseCron("* * * * *", "UTC");
  for (const bad of [-1, 1.5, MAX_CRON_AFTER_MS, Number.NaN]) {
    assert.throws(() => s.nextSlot(bad), InvalidArgumentError);
  }
  assert.equal(s.nextSlot(MAX_CRON_AFTER_MS - 1), MAX_CRON_AFTER_MS);
  assert.throws(() => parseCron(5 as unknown as string, "UTC"), InvalidArgumentError);
  assert.throws(() => parseCron("* * * * *", null as unknown as string), InvalidArgumentError);
});
