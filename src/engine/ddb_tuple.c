/*-------------------------------------------------------------------------
 *
 * ddb_tuple.c
 *	  Stored leaf tuples and the full tuples the executor sees.
 *
 * A leaf item stores the encoded key once (it is what the tree compares)
 * followed by a heap-format tuple of the table's row type in which the key
 * columns are NULL: the key columns are not stored twice.  The tuple header
 * is a real HeapTupleHeaderData, so PostgreSQL's own visibility routines
 * judge it in place, on the shared buffer.
 *
 * Readers expand a stored tuple into a full heap tuple of the row type: key
 * columns decoded from the encoded key, the item column copied, and the
 * transaction fields (xmin, xmax, cid, ctid, xact infomask bits) carried
 * over so system columns read as they would on heap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/toast_internals.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/jsonb.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/*
 * Build the stored form of the row in 'slot': a heap tuple with key columns
 * NULL, and the encoded key appended to 'key'.  Raises the DynamoDB-style
 * errors for missing or invalid key values.
 */
HeapTuple
ddb_form_stored_tuple(Relation rel, TupleTableSlot *slot, StringInfo key)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *isnull;

	slot_getallattrs(slot);
	values = palloc(sizeof(Datum) * desc->natts);
	isnull = palloc(sizeof(bool) * desc->natts);
	memcpy(values, slot->tts_values, sizeof(Datum) * desc->natts);
	memcpy(isnull, slot->tts_isnull, sizeof(bool) * desc->natts);
	return ddb_form_stored_values(rel, values, isnull, key);
}

/* ddb_form_stored_item by heap_form_tuple: any form of the item column */
static HeapTuple
form_stored_item_generic(TupleDesc desc, int itemattno, Jsonb *itemcol)
{
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *isnull = palloc(sizeof(bool) * desc->natts);
	HeapTuple	tuple;

	memset(isnull, true, sizeof(bool) * desc->natts);
	values[itemattno - 1] = JsonbPGetDatum(itemcol);
	isnull[itemattno - 1] = false;
	tuple = heap_form_tuple(desc, values, isnull);
	pfree(values);
	pfree(isnull);
	return tuple;
}

/*
 * The stored tuple of an item whose key was already checked and encoded
 * (the item API, and ddb_form_stored_values for rows from SQL): key
 * columns NULL, the item column set.
 *
 * An item column held inline with a 4-byte header (what the item functions
 * build) is formed here without heap_form_tuple's general per-attribute
 * passes: the item is the tuple's one value, so it starts at t_hoff with no
 * alignment padding, in the 1-byte-header form when it is short enough and
 * the column's storage allows (heaptuple.c's packing rule).  Other forms
 * (compressed, external, short already) go through heap_form_tuple.
 *
 * Only what a leaf keeps is formed: the attribute count, null bitmap,
 * t_hoff, the HEAP_HASNULL and HEAP_HASVARWIDTH bits and the data.  The
 * transaction fields (t_choice, t_ctid, the HEAP_XACT_MASK bits) stay zero:
 * every caller sets them before the tuple is used (ddb_prepare_new_version,
 * or the update's own header in ddb_modify.c), overwriting what
 * heap_form_tuple writes there as a composite datum's header (its length,
 * row type and, on servers that version row types, the version).  Checked
 * builds compare the rest with heap_form_tuple's tuple byte for byte.
 */
HeapTuple
ddb_form_stored_item(Relation rel, Jsonb *itemcol)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			itemattno = ddb_get_keyinfo(rel)->itemattno;
	Form_pg_attribute att = TupleDescAttr(desc, itemattno - 1);
	Pointer		val = (Pointer) itemcol;
	bool		pack;
	Size		hoff;
	Size		datalen;
	HeapTuple	tuple;
	HeapTupleHeader td;
	char	   *data;

	if (VARATT_IS_EXTENDED(val) || desc->natts < 2)
		return form_stored_item_generic(desc, itemattno, itemcol);

	/* the key columns are NULL: the tuple always has a null bitmap */
	hoff = MAXALIGN(offsetof(HeapTupleHeaderData, t_bits) + BITMAPLEN(desc->natts));
	pack = att->attstorage != TYPSTORAGE_PLAIN && VARATT_CAN_MAKE_SHORT(val);
	datalen = pack ? VARATT_CONVERTED_SHORT_SIZE(val) : VARSIZE(val);

	tuple = (HeapTuple) palloc0(HEAPTUPLESIZE + hoff + datalen);
	td = (HeapTupleHeader) ((char *) tuple + HEAPTUPLESIZE);
	tuple->t_data = td;
	tuple->t_len = hoff + datalen;
	ItemPointerSetInvalid(&tuple->t_self);
	tuple->t_tableOid = InvalidOid;
	HeapTupleHeaderSetNatts(td, desc->natts);
	td->t_hoff = hoff;
	td->t_infomask = HEAP_HASNULL | HEAP_HASVARWIDTH;
	td->t_bits[(itemattno - 1) / 8] = 1 << ((itemattno - 1) % 8);

	data = (char *) td + hoff;
	if (pack)
	{
		SET_VARSIZE_SHORT(data, datalen);
		memcpy(data + 1, VARDATA(val), datalen - 1);
	}
	else
		memcpy(data, val, datalen);

#ifdef DDB_CHECKS
	{
		HeapTuple	generic = form_stored_item_generic(desc, itemattno, itemcol);
		HeapTupleHeader gd = generic->t_data;
		Size		from = offsetof(HeapTupleHeaderData, t_bits);

		DdbCheck(generic->t_len == tuple->t_len &&
				 gd->t_infomask2 == td->t_infomask2 &&
				 (gd->t_infomask & ~HEAP_XACT_MASK) == td->t_infomask &&
				 gd->t_hoff == td->t_hoff &&
				 memcmp((char *) gd + from, (char *) td + from, tuple->t_len - from) == 0);
		heap_freetuple(generic);
	}
#endif
	return tuple;
}

/* Installed by the API layer (ddb.h). */
DdbItemColumnCheck ddb_item_column_check = NULL;

/*
 * The same from a row's values (indexed by attribute number - 1); scribbles
 * on isnull, and the item column check may replace the item column in
 * values (ddb_item_column_check).
 */
HeapTuple
ddb_form_stored_values(Relation rel, Datum *values, bool *isnull, StringInfo key)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	TupleDesc	desc = RelationGetDescr(rel);

	for (int k = 0; k < ki->nkeys; k++)
	{
		int			a = ki->keyattno[k] - 1;

		if (isnull[a])
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("null value in key column \"%s\" of ddb table \"%s\"",
							NameStr(TupleDescAttr(desc, a)->attname),
							ddb_user_relation_name(rel)),
					 errdetail("Every item needs its partition key%s.",
							   ki->nkeys > 1 ? " and sort key" : "")));
		ddb_check_key_value(ki->keytype[k], values[a], k == 0,
							NameStr(TupleDescAttr(desc, a)->attname));
	}
	if (!isnull[ki->itemattno - 1])
	{
		if (ddb_item_column_check == NULL)
			elog(ERROR, "ddb's item column check is not installed");
		ddb_item_column_check(rel, ki, values);
	}
	ddb_encode_key(ki, values, isnull, key);

	for (int k = 0; k < ki->nkeys; k++)
		isnull[ki->keyattno[k] - 1] = true;

	/* the item column alone (other columns are keys or dropped): formed directly */
	for (int a = 0; a < desc->natts; a++)
		if (!isnull[a] && a != ki->itemattno - 1)
			return heap_form_tuple(desc, values, isnull);
	if (!isnull[ki->itemattno - 1])
		return ddb_form_stored_item(rel, (Jsonb *) DatumGetPointer(values[ki->itemattno - 1]));
	return heap_form_tuple(desc, values, isnull);
}

/* Copy a tuple header's transaction fields (xmin, xmax, cid, ctid, bits). */
static void
ddb_copy_xact_fields(HeapTupleHeader dst, HeapTupleHeader src)
{
	dst->t_choice = src->t_choice;
	dst->t_ctid = src->t_ctid;
	dst->t_infomask &= ~HEAP_XACT_MASK;
	dst->t_infomask |= src->t_infomask & HEAP_XACT_MASK;
	dst->t_infomask2 &= ~HEAP2_XACT_MASK;
	dst->t_infomask2 |= src->t_infomask2 & HEAP2_XACT_MASK;
}

/*
 * Expand a stored tuple into a palloc'd full tuple of the row type.  The
 * caller holds the content lock on the page 'stored' points into.
 */
HeapTuple
ddb_expand_tuple(Relation rel, const char *key, int keylen,
				 HeapTupleHeader stored, uint32 storedlen, ItemPointer tid)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum		values[MaxTupleAttributeNumber];
	bool		isnull[MaxTupleAttributeNumber];
	Datum		keyvalues[DDB_MAX_KEY_COLUMNS];
	bool		keynull[DDB_MAX_KEY_COLUMNS];
	HeapTupleData st;
	HeapTuple	full;

	st.t_data = stored;
	st.t_len = storedlen;
	st.t_tableOid = RelationGetRelid(rel);
	st.t_self = *tid;
	heap_deform_tuple(&st, desc, values, isnull);

	ddb_decode_key(ki, key, keylen, keyvalues, keynull);
	for (int k = 0; k < ki->nkeys; k++)
	{
		values[ki->keyattno[k] - 1] = keyvalues[k];
		isnull[ki->keyattno[k] - 1] = keynull[k];
	}

	full = heap_form_tuple(desc, values, isnull);

	/* Carry the transaction fields over: system columns read as on heap. */
	ddb_copy_xact_fields(full->t_data, stored);
	full->t_self = *tid;
	full->t_tableOid = RelationGetRelid(rel);
	return full;
}

/*
 * The item column of a stored tuple, as heap_getattr reads it.  A stored
 * tuple's key columns are NULL and come first, so the item column is its
 * first non-null attribute and starts right at the tuple's data (offset 0
 * is aligned for any type): no walk over the null bitmap and the
 * attributes' offsets, which heap_getattr takes for any tuple with nulls.
 * A tuple of another form (one formed before a column was dropped, or
 * without the item column) is read by heap_getattr.
 */
Datum
ddb_stored_item_column(const DdbKeyInfo *ki, TupleDesc desc, HeapTuple stored,
					   bool *isnull)
{
	HeapTupleHeader td = stored->t_data;
	int			a = ki->itemattno - 1;

	if (HeapTupleHasNulls(stored) && a < HeapTupleHeaderGetNatts(td) &&
		!att_isnull(a, td->t_bits))
	{
		int			i;

		for (i = 0; i < a; i++)
			if (!att_isnull(i, td->t_bits))
				break;
		if (i == a)
		{
			*isnull = false;
			return fetchatt(TupleDescAttr(desc, a), (char *) td + td->t_hoff);
		}
	}
	return heap_getattr(stored, ki->itemattno, desc, isnull);
}

/*
 * The longest stored tuple a leaf item with an encoded key of 'keylen'
 * bytes can hold: the item must fit on a page beside the largest high key
 * (DDB_MAX_ITEM_SIZE), and the key takes its share of that.
 */
static Size
ddb_stored_tuple_budget(int keylen)
{
	return (DDB_MAX_ITEM_SIZE & ~(Size) (MAXIMUM_ALIGNOF - 1)) - DdbLeafTupleOffset(keylen);
}

/*
 * Store the item column of 'tuple' out of line, whatever its size.  For a
 * tuple that heap's toaster left too long for a leaf beside a long key.
 */
static HeapTuple
ddb_toast_item_column(Relation rel, HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			a = ddb_get_keyinfo(rel)->itemattno - 1;
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *isnull = palloc(sizeof(bool) * desc->natts);
	HeapTuple	result;

	heap_deform_tuple(tuple, desc, values, isnull);
	if (isnull[a] || VARATT_IS_EXTERNAL(DatumGetPointer(values[a])))
		return tuple;			/* nothing left to move */
	values[a] = toast_save_datum(rel, values[a], NULL, 0);
	result = heap_form_tuple(desc, values, isnull);
	ddb_copy_xact_fields(result->t_data, tuple->t_data);
	result->t_self = tuple->t_self;
	result->t_tableOid = tuple->t_tableOid;
	return result;
}

/*
 * Would ddb_toast_stored_tuple have work to do (and side effects)?  When
 * not, it returns 'tuple' itself, and callers may skip it.
 */
bool
ddb_stored_tuple_needs_toast(Relation rel, HeapTuple tuple, HeapTuple old, int keylen)
{
	if (!OidIsValid(rel->rd_rel->reltoastrelid))
		return false;
	return !(tuple->t_len <= Min(TOAST_TUPLE_THRESHOLD, ddb_stored_tuple_budget(keylen)) &&
			 !HeapTupleHasExternal(tuple) && (old == NULL || !HeapTupleHasExternal(old)));
}

/*
 * Move large item values out of line through the table's heap TOAST table,
 * so that the leaf item fits: beyond heap's TOAST_TUPLE_THRESHOLD (leaf
 * items stay near a quarter page) or beyond what a page leaves beside the
 * item's key, whichever is less.  'keylen' is the encoded key's length.
 * 'old' is the version being replaced, whose out-of-line values are reused
 * or deleted (heap_toast_insert_or_update's contract).
 */
HeapTuple
ddb_toast_stored_tuple(Relation rel, HeapTuple tuple, HeapTuple old, int keylen)
{
	Size		budget = ddb_stored_tuple_budget(keylen);
	HeapTuple	result;

	if (!ddb_stored_tuple_needs_toast(rel, tuple, old, keylen))
		return tuple;
	result = heap_toast_insert_or_update(rel, tuple, old, 0);

	/*
	 * Heap's toaster aims at its own target, which a long key leaves no
	 * room for: compressed inline, the item can still be too long.
	 */
	if (result->t_len > budget)
		result = ddb_toast_item_column(rel, result);
	return result;
}
