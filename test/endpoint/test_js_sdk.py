"""A Node.js application against the endpoint: js_app_flow.mjs uses the AWS
SDK for JavaScript v3 (@aws-sdk/client-dynamodb and the DocumentClient of
@aws-sdk/lib-dynamodb, installed by run.sh's npm install) as its
documentation does -- waiters, paginators, batch retry loops, errors told
apart by class, transactions, a parallel scan -- and asserts what each step
gives back.  The SDK parses responses and errors its own way (the error's
class from __type, the old item on ConditionalCheckFailedException, the
cancellation reasons), so this catches what boto3 forgives."""
import os
import shutil
import subprocess
import uuid

from conftest import ENDPOINT, KEY_ID, SECRET

HERE = os.path.dirname(os.path.abspath(__file__))
SDK = os.path.join(HERE, "node_modules", "@aws-sdk", "lib-dynamodb")


def run_flow(table):
    env = dict(os.environ, DDB_ENDPOINT=ENDPOINT, DDB_KEY_ID=KEY_ID, DDB_SECRET=SECRET,
               DDB_TABLE=table, AWS_SESSION_TOKEN="")
    return subprocess.run(["node", os.path.join(HERE, "js_app_flow.mjs")], env=env,
                          capture_output=True, text=True, timeout=120)


def test_js_sdk_app_flow():
    assert shutil.which("node"), "node is not installed"
    assert os.path.isdir(SDK), "the AWS SDK for JavaScript is not installed (npm install in test/endpoint failed)"
    r = run_flow("jsflow_" + uuid.uuid4().hex[:8])
    print(r.stdout, r.stderr)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("all steps passed"), r.stdout + r.stderr


def test_js_sdk_flow_can_fail():
    """The flow's assertions bite: pointed at a table name DynamoDB refuses,
    its first step fails and the run says so."""
    r = run_flow("x")
    assert r.returncode != 0
    assert 'FAILED at "create table and wait": ValidationException' in r.stdout, r.stdout + r.stderr
