"""PartiQL through boto3, unchanged: client.execute_statement with
Parameters, paging through NextToken, UPDATE ... RETURNING, and the errors
boto3 raises as their own exception classes (DuplicateItemException,
ConditionalCheckFailedException, ValidationException).  ddb translates
each statement into a Query, Scan, PutItem, UpdateItem or DeleteItem."""
import pytest
from botocore.exceptions import ClientError

from conftest import create_table


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


@pytest.fixture
def music(ddb, table_name):
    create_table(ddb, table_name)
    yield table_name
    ddb.delete_table(TableName=table_name)


def test_partiql_insert_select_paging(ddb, music):
    """INSERT with placeholders, then a SELECT read in pages of 3 through
    NextToken: every item once, in sort key order."""
    for i in range(10):
        r = ddb.execute_statement(
            Statement=f'INSERT INTO "{music}" VALUE {{\'PK\': ?, \'SK\': ?, \'n\': ?}}',
            Parameters=[S("A"), S(f"S#{i:02d}"), N(i)])
        assert r.get("Items") is None
    seen = []
    token = None
    pages = 0
    while True:
        kw = {"NextToken": token} if token else {}
        r = ddb.execute_statement(Statement=f'SELECT SK, n FROM "{music}" WHERE PK = ?',
                                  Parameters=[S("A")], Limit=3, **kw)
        seen += [it["SK"]["S"] for it in r["Items"]]
        pages += 1
        token = r.get("NextToken")
        if not token:
            break
    assert seen == [f"S#{i:02d}" for i in range(10)]
    assert pages >= 4
    # ORDER BY DESC and a filter
    r = ddb.execute_statement(
        Statement=f'SELECT SK FROM "{music}" WHERE PK = \'A\' AND n >= ? ORDER BY SK DESC',
        Parameters=[N(8)])
    assert [it["SK"]["S"] for it in r["Items"]] == ["S#09", "S#08"]


def test_partiql_writes_and_errors(ddb, music):
    """UPDATE RETURNING, DELETE, a duplicate INSERT, a failed condition and
    a token that is not the statement's, as boto3's exceptions."""
    ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'p', 'SK': 's', 'n': 1}}")
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'p', 'SK': 's'}}")
    assert e.value.response["Error"]["Code"] == "DuplicateItemException"
    assert e.value.response["Error"]["Message"] == "Duplicate primary key exists in table"
    assert isinstance(e.value, ddb.exceptions.DuplicateItemException)

    r = ddb.execute_statement(
        Statement=f"UPDATE \"{music}\" SET n = n + ? WHERE PK = 'p' AND SK = 's' RETURNING ALL NEW *",
        Parameters=[N(41)])
    assert r["Items"] == [{"PK": S("p"), "SK": S("s"), "n": N(42)}]
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.execute_statement(
            Statement=f"UPDATE \"{music}\" SET n = 0 WHERE PK = 'p' AND SK = 's' AND n = 1")
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f"UPDATE \"{music}\" SET n = 0 WHERE PK = 'p'")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "mandatory equality on all key attributes" in e.value.response["Error"]["Message"]

    r = ddb.execute_statement(
        Statement=f"DELETE FROM \"{music}\" WHERE PK = 'p' AND SK = 's' RETURNING ALL OLD *")
    assert r["Items"][0]["n"] == N(42)
    assert ddb.execute_statement(Statement=f"SELECT * FROM \"{music}\"")["Items"] == []

    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f"SELECT * FROM \"{music}\" WHERE PK = ?")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f"SELECT * FROM \"{music}\" WHERE PK = 'p'",
                              NextToken="bm90IGEgdG9rZW4=")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f"SELECT * FROM \"{music}\" a JOIN \"{music}\" b ON a.PK = b.PK")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_partiql_edited_token_and_in_limit(ddb, music):
    """A NextToken is signed: the same token reads on, an edited one is a
    ValidationException.  IN takes at most 50 partition key values.
    (ReturnValuesOnConditionCheckFailure on a SELECT is in the regression
    suite: Debian's botocore does not know the member.)"""
    import base64
    for i in range(3):
        ddb.execute_statement(
            Statement=f'INSERT INTO "{music}" VALUE {{\'PK\': \'t\', \'SK\': ?}}',
            Parameters=[S(f"s{i}")])
    stmt = f'SELECT SK FROM "{music}" WHERE PK = \'t\''
    token = ddb.execute_statement(Statement=stmt, Limit=1)["NextToken"]
    r = ddb.execute_statement(Statement=stmt, NextToken=token)
    assert [it["SK"]["S"] for it in r["Items"]] == ["s1", "s2"]
    raw = base64.b64decode(token).decode()
    edited = base64.b64encode(raw.replace('"s0"', '"s1"').encode()).decode()
    assert edited != token
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=stmt, NextToken=edited)
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "Invalid NextToken" in e.value.response["Error"]["Message"]
    values = ", ".join(f"'k{i}'" for i in range(51))
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=f'SELECT * FROM "{music}" WHERE PK IN [{values}]')
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "at most 50" in e.value.response["Error"]["Message"]


def test_partiql_batch_and_transaction(ddb, music):
    """batch_execute_statement: per-statement answers in order, a failure
    kept to its statement; execute_transaction: all or nothing, with the
    cancellation reasons in statement order."""
    ins = f'INSERT INTO "{music}" VALUE {{\'PK\': ?, \'SK\': ?, \'n\': ?}}'
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": ins, "Parameters": [S("B"), S("1"), N(1)]},
        {"Statement": ins, "Parameters": [S("B"), S("1"), N(2)]},
        {"Statement": ins, "Parameters": [S("B"), S("2"), N(2)]}])
    codes = [x.get("Error", {}).get("Code") for x in r["Responses"]]
    assert codes == [None, "DuplicateItem", None]
    sel = f'SELECT n FROM "{music}" WHERE PK = ? AND SK = ?'
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": sel, "Parameters": [S("B"), S("2")]},
        {"Statement": sel, "Parameters": [S("B"), S("9")]}])
    assert [x.get("Item") for x in r["Responses"]] == [{"n": N(2)}, None]
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": f'UPDATE "{music}" SET n = 5 WHERE PK = ? AND SK = ?',
             "Parameters": [S("B"), S("1")]},
            {"Statement": f'UPDATE "{music}" SET n = 5 WHERE PK = ? AND SK = ?',
             "Parameters": [S("B"), S("nope")]}])
    assert e.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert [c["Code"] for c in e.value.response["CancellationReasons"]] == \
        ["None", "ConditionalCheckFailed"]
    r = ddb.execute_transaction(TransactStatements=[
        {"Statement": sel, "Parameters": [S("B"), S("1")]}])
    assert r["Responses"] == [{"Item": {"n": N(1)}}]
    ddb.execute_transaction(ClientRequestToken="t-1", TransactStatements=[
        {"Statement": f'UPDATE "{music}" SET n = n + 1 WHERE PK = ? AND SK = ?',
         "Parameters": [S("B"), S("1")]}])
    r = ddb.execute_transaction(TransactStatements=[
        {"Statement": sel, "Parameters": [S("B"), S("1")]}])
    assert r["Responses"] == [{"Item": {"n": N(2)}}]


def test_partiql_transaction_exists(ddb, music):
    """EXISTS(SELECT ...) in execute_transaction is a ConditionCheck: the
    writes beside it happen only when the item exists and the other terms
    hold; outside a transaction it is a ValidationException."""
    ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'acct', 'SK': 'a', 'open': true}}")
    check = f'EXISTS(SELECT * FROM "{music}" WHERE PK = ? AND SK = ? AND "open" = ?)'
    ins = f'INSERT INTO "{music}" VALUE {{\'PK\': \'acct\', \'SK\': ?}}'
    ddb.execute_transaction(TransactStatements=[
        {"Statement": check, "Parameters": [S("acct"), S("a"), {"BOOL": True}]},
        {"Statement": ins, "Parameters": [S("t1")]}])
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": ins, "Parameters": [S("t2")]},
            {"Statement": check, "Parameters": [S("acct"), S("a"), {"BOOL": False}]}])
    assert e.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = e.value.response["CancellationReasons"]
    assert [c["Code"] for c in reasons] == ["None", "ConditionalCheckFailed"]
    got = ddb.execute_statement(Statement=f"SELECT SK FROM \"{music}\" WHERE PK = 'acct'")
    assert [i["SK"] for i in got["Items"]] == [S("a"), S("t1")]
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=check, Parameters=[S("acct"), S("a"), {"BOOL": True}])
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_partiql_transaction_duplicate_insert(ddb, music):
    """An INSERT of a key that has an item cancels the transaction with the
    reason DuplicateItem (the INSERT alone is DuplicateItemException), not
    ConditionalCheckFailed; nothing is written."""
    ins = f'INSERT INTO "{music}" VALUE {{\'PK\': ?, \'SK\': ?}}'
    ddb.execute_statement(Statement=ins, Parameters=[S("d"), S("1")])
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": ins, "Parameters": [S("d"), S("2")]},
            {"Statement": ins, "Parameters": [S("d"), S("1")]}])
    assert e.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert "[None, DuplicateItem]" in e.value.response["Error"]["Message"]
    reasons = e.value.response["CancellationReasons"]
    assert [c["Code"] for c in reasons] == ["None", "DuplicateItem"]
    assert reasons[1]["Message"] == "Duplicate primary key exists in table"
    got = ddb.execute_statement(Statement=f"SELECT SK FROM \"{music}\" WHERE PK = 'd'")
    assert got["Items"] == [{"SK": S("1")}]


def test_partiql_returning_in_batch_and_transaction(ddb, music):
    """batch_execute_statement honours RETURNING: the image is the
    statement's Item.  execute_transaction refuses it with DynamoDB's
    ValidationException, naming the statement, and runs nothing."""
    ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'r', 'SK': '1', 'n': 1}}")
    upd = f'UPDATE "{music}" SET n = ? WHERE PK = \'r\' AND SK = \'1\' RETURNING ALL NEW *'
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": upd, "Parameters": [N(2)]},
        {"Statement": f'DELETE FROM "{music}" WHERE PK = \'r\' AND SK = \'0\' RETURNING ALL OLD *'}])
    assert r["Responses"][0]["Item"] == {"PK": S("r"), "SK": S("1"), "n": N(2)}
    assert "Item" not in r["Responses"][1] and "Error" not in r["Responses"][1]
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": f'UPDATE "{music}" SET n = 5 WHERE PK = \'r\' AND SK = \'1\''},
            {"Statement": upd, "Parameters": [N(3)]}])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["Error"]["Message"] == \
        "Validation failed in TransactStatements[1]: RETURNING clause is not supported in ExecuteTransaction."
    got = ddb.execute_statement(Statement=f"SELECT n FROM \"{music}\" WHERE PK = 'r'")
    assert got["Items"] == [{"n": N(2)}]


def test_partiql_in_key_of_another_type(ddb, music):
    """A partition key value of another type in an IN list is the
    statement's ValidationException, as in PK = v, even when the page
    would end before the Query of that value."""
    ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'w', 'SK': '1'}}")
    ddb.execute_statement(Statement=f"INSERT INTO \"{music}\" VALUE {{'PK': 'w', 'SK': '2'}}")
    for stmt, params in ((f'SELECT SK FROM "{music}" WHERE PK = ?', [N(1)]),
                         (f'SELECT SK FROM "{music}" WHERE PK IN [\'w\', ?]', [N(1)]),
                         (f'SELECT SK FROM "{music}" WHERE PK = \'w\' OR PK = ?', [N(1)])):
        with pytest.raises(ClientError) as e:
            ddb.execute_statement(Statement=stmt, Parameters=params, Limit=1)
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert e.value.response["Error"]["Message"] == \
            "One or more parameter values were invalid: Condition parameter type does not match schema type"


def test_partiql_order_by_several_partitions(ddb, music):
    """ORDER BY over an IN list of partition keys: by the partition key,
    then the sort key, read in pages; without the partition key in ORDER BY
    it is DynamoDB's ValidationException."""
    for pk in ("a", "b", "c"):
        for sk in ("1", "2"):
            ddb.execute_statement(Statement=f'INSERT INTO "{music}" VALUE {{\'PK\': ?, \'SK\': ?}}',
                                  Parameters=[S(pk), S(sk)])
    stmt = f'SELECT PK, SK FROM "{music}" WHERE PK IN [\'b\', \'c\', \'a\'] ORDER BY PK DESC, SK'
    seen = []
    token = None
    while True:
        kw = {"NextToken": token} if token else {}
        r = ddb.execute_statement(Statement=stmt, Limit=2, **kw)
        seen += [(it["PK"]["S"], it["SK"]["S"]) for it in r["Items"]]
        token = r.get("NextToken")
        if not token:
            break
    assert seen == [("c", "1"), ("c", "2"), ("b", "1"), ("b", "2"), ("a", "1"), ("a", "2")]
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(
            Statement=f'SELECT * FROM "{music}" WHERE PK = \'a\' OR PK = \'b\' ORDER BY SK DESC')
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["Error"]["Message"] == \
        "Must have hash key in ORDER BY clause when more than one hash key condition specified in WHERE clause."
