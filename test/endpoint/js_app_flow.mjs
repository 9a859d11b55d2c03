// A Node.js application's life against the endpoint, written the way the
// AWS SDK for JavaScript v3's documentation writes one: the low-level
// client for tables and waiters, the DocumentClient (lib-dynamodb) for
// items, its paginators, and errors told apart by their class name.
// test_js_sdk.py runs it with DDB_ENDPOINT, DDB_KEY_ID, DDB_SECRET and
// DDB_TABLE set; each step prints a line, and the first failed assertion
// ends the run with a non-zero exit and the step's name.
import assert from "node:assert/strict";
import {
  CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient,
  waitUntilTableExists, waitUntilTableNotExists, paginateListTables,
} from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand, BatchWriteCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand,
  PutCommand, QueryCommand, TransactGetCommand, TransactWriteCommand, UpdateCommand,
  paginateQuery, paginateScan,
} from "@aws-sdk/lib-dynamodb";

const table = process.env.DDB_TABLE;
const client = new DynamoDBClient({
  endpoint: process.env.DDB_ENDPOINT,
  region: "us-east-1",
  credentials: { accessKeyId: process.env.DDB_KEY_ID, secretAccessKey: process.env.DDB_SECRET },
  maxAttempts: 1,
});
const doc = DynamoDBDocumentClient.from(client, {
  marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
});

let step = "start";
function begin(name) {
  step = name;
}
function done(detail) {
  console.log(`ok ${step}${detail ? ": " + detail : ""}`);
}

// the error a command fails with (assert.rejects hides the object)
async function failure(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("the command succeeded");
}

const orders = (c) => Array.from({ length: 23 }, (_, i) => ({
  PK: `CUST#${c}`,
  SK: `ORDER#2026-01-${String(1 + i).padStart(2, "0")}`,
  GSI1PK: i % 2 ? "STATUS#OPEN" : "STATUS#SHIPPED",
  GSI1SK: `${c}#${String(i).padStart(3, "0")}`,
  total: i * 10.5,
  lines: [{ sku: `S${i}`, qty: i + 1 }],
  tags: new Set(["a", `t${i % 3}`]),
  blob: new Uint8Array([0, i, 255]),
  gone: undefined,
}));

async function main() {
  begin("create table and wait");
  await client.send(new CreateTableCommand({
    TableName: table,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: "PK", AttributeType: "S" }, { AttributeName: "SK", AttributeType: "S" },
      { AttributeName: "GSI1PK", AttributeType: "S" }, { AttributeName: "GSI1SK", AttributeType: "S" },
    ],
    KeySchema: [{ AttributeName: "PK", KeyType: "HASH" }, { AttributeName: "SK", KeyType: "RANGE" }],
    GlobalSecondaryIndexes: [{
      IndexName: "GSI1",
      KeySchema: [{ AttributeName: "GSI1PK", KeyType: "HASH" }, { AttributeName: "GSI1SK", KeyType: "RANGE" }],
      Projection: { ProjectionType: "ALL" },
    }],
  }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table });
  const d = await client.send(new DescribeTableCommand({ TableName: table }));
  assert.equal(d.Table.TableStatus, "ACTIVE");
  assert.equal(d.Table.GlobalSecondaryIndexes[0].IndexStatus, "ACTIVE");
  assert.equal(d.$metadata.httpStatusCode, 200);
  let listed = [];
  for await (const page of paginateListTables({ client, pageSize: 1 }, {}))
    listed = listed.concat(page.TableNames);
  assert.ok(listed.includes(table), "ListTables' pages name the table");
  done(`${listed.length} tables listed a page at a time`);

  begin("batch write with the UnprocessedItems loop");
  const all = [...orders(1), ...orders(2), ...orders(3)];
  for (let i = 0; i < all.length; i += 25) {
    let req = { [table]: all.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
    for (let tries = 0; req && Object.keys(req).length; tries++) {
      assert.ok(tries < 5, "UnprocessedItems never emptied");
      const r = await doc.send(new BatchWriteCommand({ RequestItems: req }));
      req = r.UnprocessedItems;
    }
  }
  done(`${all.length} items`);

  begin("get with a projection, types round-trip");
  const g = await doc.send(new GetCommand({
    TableName: table, Key: { PK: "CUST#2", SK: "ORDER#2026-01-05" }, ConsistentRead: true,
  }));
  assert.equal(g.Item.total, 42);
  assert.deepEqual(g.Item.lines, [{ sku: "S4", qty: 5 }]);
  assert.ok(g.Item.tags instanceof Set && g.Item.tags.has("t1") && g.Item.tags.size === 2);
  assert.deepEqual(Array.from(g.Item.blob), [0, 4, 255]);
  assert.ok(!("gone" in g.Item));
  const gp = await doc.send(new GetCommand({
    TableName: table, Key: { PK: "CUST#2", SK: "ORDER#2026-01-05" },
    ProjectionExpression: "#t, #l[0].qty", ExpressionAttributeNames: { "#t": "total", "#l": "lines" },
  }));
  assert.deepEqual(gp.Item, { total: 42, lines: [{ qty: 5 }] });
  const none = await doc.send(new GetCommand({ TableName: table, Key: { PK: "CUST#9", SK: "x" } }));
  assert.equal(none.Item, undefined);
  done();

  begin("query pages, newest first");
  const got = [];
  let pages = 0;
  for await (const page of paginateQuery({ client: doc, pageSize: 7 }, {
    TableName: table,
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :p)",
    ExpressionAttributeValues: { ":pk": "CUST#3", ":p": "ORDER#2026-01" },
    ScanIndexForward: false,
  })) {
    pages++;
    assert.ok(page.Count <= 7);
    got.push(...page.Items.map((i) => i.SK));
  }
  const want = orders(3).map((i) => i.SK).reverse();
  assert.deepEqual(got, want);
  assert.ok(pages >= 4, `${pages} pages`);
  done(`${got.length} items in ${pages} pages`);

  begin("query the GSI with a filter and a count");
  const q = await doc.send(new QueryCommand({
    TableName: table, IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :s AND GSI1SK BETWEEN :a AND :b",
    FilterExpression: "#t > :min",
    ExpressionAttributeNames: { "#t": "total" },
    ExpressionAttributeValues: { ":s": "STATUS#OPEN", ":a": "2#", ":b": "2#999", ":min": 100 },
  }));
  const wantOpen = orders(2).filter((_, i) => i % 2 && i * 10.5 > 100).map((i) => i.SK);
  assert.deepEqual(q.Items.map((i) => i.SK), wantOpen);
  assert.equal(q.ScannedCount, 11);
  const c = await doc.send(new QueryCommand({
    TableName: table, KeyConditionExpression: "PK = :pk", Select: "COUNT",
    ExpressionAttributeValues: { ":pk": "CUST#1" },
  }));
  assert.equal(c.Count, 23);
  assert.equal(c.Items, undefined);
  done();

  begin("update: a counter, a list append, a set, ALL_NEW");
  const u = await doc.send(new UpdateCommand({
    TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-01" },
    UpdateExpression: "SET visits = if_not_exists(visits, :z) + :one, #l = list_append(#l, :l) ADD tags :t REMOVE #b",
    ConditionExpression: "attribute_exists(PK)",
    ExpressionAttributeNames: { "#l": "lines", "#b": "blob" },
    ExpressionAttributeValues: { ":z": 0, ":one": 1, ":l": [{ sku: "X", qty: 1 }], ":t": new Set(["new"]) },
    ReturnValues: "ALL_NEW",
  }));
  assert.equal(u.Attributes.visits, 1);
  assert.equal(u.Attributes.lines.length, 2);
  assert.ok(u.Attributes.tags.has("new"));
  assert.ok(!("blob" in u.Attributes));
  const u2 = await doc.send(new UpdateCommand({
    TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-01" },
    UpdateExpression: "SET visits = visits + :one", ExpressionAttributeValues: { ":one": 1 },
    ReturnValues: "UPDATED_OLD",
  }));
  assert.deepEqual(u2.Attributes, { visits: 1 });
  done();

  begin("a failed condition, told apart by its class, with the old item");
  const e = await failure(doc.send(new PutCommand({
    TableName: table, Item: { PK: "CUST#1", SK: "ORDER#2026-01-02", total: 0 },
    ConditionExpression: "attribute_not_exists(PK)",
    ReturnValuesOnConditionCheckFailure: "ALL_OLD",
  })));
  assert.equal(e.name, "ConditionalCheckFailedException");
  assert.equal(e.$metadata.httpStatusCode, 400);
  assert.equal(e.$fault, "client");
  assert.equal(e.message, "The conditional request failed");
  assert.equal(e.Item?.SK?.S, "ORDER#2026-01-02", "the old item rides on the exception");
  done();

  begin("a validation error and a missing table");
  const v = await failure(doc.send(new QueryCommand({
    TableName: table, KeyConditionExpression: "SK = :s", ExpressionAttributeValues: { ":s": "x" },
  })));
  assert.equal(v.name, "ValidationException");
  assert.equal(v.$metadata.httpStatusCode, 400);
  const nf = await failure(doc.send(new GetCommand({ TableName: table + "_nope", Key: { PK: "a", SK: "b" } })));
  assert.equal(nf.name, "ResourceNotFoundException");
  done(v.message);

  begin("transactions: a cancellation's reasons, then a commit");
  const t = await failure(doc.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName: table, Item: { PK: "CUST#4", SK: "A", n: 1 } } },
      { ConditionCheck: { TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-03" },
        ConditionExpression: "#t > :big", ExpressionAttributeNames: { "#t": "total" },
        ExpressionAttributeValues: { ":big": 1e9 } } },
    ],
  })));
  assert.equal(t.name, "TransactionCanceledException");
  assert.deepEqual(t.CancellationReasons.map((r) => r.Code), ["None", "ConditionalCheckFailed"]);
  await doc.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName: table, Item: { PK: "CUST#4", SK: "A", n: 1 } } },
      { Update: { TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-03" },
        UpdateExpression: "SET n = :n", ExpressionAttributeValues: { ":n": 7 } } },
      { Delete: { TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-04" } } },
    ],
    ClientRequestToken: "js-flow-1",
  }));
  const tg = await doc.send(new TransactGetCommand({
    TransactItems: [
      { Get: { TableName: table, Key: { PK: "CUST#4", SK: "A" } } },
      { Get: { TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-04" } } },
      { Get: { TableName: table, Key: { PK: "CUST#1", SK: "ORDER#2026-01-03" }, ProjectionExpression: "n" } },
    ],
  }));
  assert.equal(tg.Responses[0].Item.n, 1);
  assert.equal(tg.Responses[1].Item, undefined);
  assert.deepEqual(tg.Responses[2].Item, { n: 7 });
  done();

  begin("batch get with UnprocessedKeys handled");
  let keys = { [table]: { Keys: all.slice(0, 40).map(({ PK, SK }) => ({ PK, SK })), ProjectionExpression: "SK" } };
  const fetched = [];
  for (let tries = 0; keys && Object.keys(keys).length; tries++) {
    assert.ok(tries < 5, "UnprocessedKeys never emptied");
    const r = await doc.send(new BatchGetCommand({ RequestItems: keys }));
    fetched.push(...r.Responses[table].map((i) => i.SK));
    keys = r.UnprocessedKeys;
  }
  // ORDER#2026-01-04 of CUST#1 was deleted by the transaction
  assert.equal(fetched.length, 39);
  done();

  begin("a parallel scan: the segments' union is the table");
  const seen = new Set();
  let scanned = 0;
  for (let s = 0; s < 3; s++) {
    for await (const page of paginateScan({ client: doc, pageSize: 10 }, {
      TableName: table, Segment: s, TotalSegments: 3, ProjectionExpression: "PK, SK",
    })) {
      for (const i of page.Items) {
        const k = `${i.PK}|${i.SK}`;
        assert.ok(!seen.has(k), `${k} in two segments`);
        seen.add(k);
      }
      scanned += page.ScannedCount;
    }
  }
  assert.equal(seen.size, all.length - 1 + 1); // one deleted, CUST#4/A added
  assert.equal(scanned, seen.size);
  done(`${seen.size} items`);

  begin("delete with ALL_OLD, then the table");
  const del = await doc.send(new DeleteCommand({
    TableName: table, Key: { PK: "CUST#4", SK: "A" }, ReturnValues: "ALL_OLD",
  }));
  assert.deepEqual(del.Attributes, { PK: "CUST#4", SK: "A", n: 1 });
  await client.send(new DeleteTableCommand({ TableName: table }));
  await waitUntilTableNotExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: table });
  done();
}

main().then(
  () => console.log("all steps passed"),
  (e) => {
    console.log(`FAILED at "${step}": ${e.name}: ${e.message}`);
    if (e.$metadata) console.log(`  $metadata: ${JSON.stringify(e.$metadata)}`);
    process.exitCode = 1;
  },
);
