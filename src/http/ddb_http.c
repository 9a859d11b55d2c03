/*-------------------------------------------------------------------------
 *
 * ddb_http.c
 *	  The DynamoDB HTTP endpoint: background workers inside PostgreSQL that
 *	  serve DynamoDB's JSON 1.0 protocol over HTTP/1.1.
 *
 * With shared_preload_libraries = 'ddb' and ddb.http_port > 0, the
 * postmaster opens the listening sockets and registers ddb.http_workers
 * background workers.  Each worker is a backend connected to
 * ddb.http_database and runs libmicrohttpd (HTTP parsing, keep-alive,
 * chunked bodies, timeouts) in its own, only thread.  A request is
 *
 *	POST /  X-Amz-Target: DynamoDB_20120810.<Operation>
 *			Content-Type: application/x-amz-json-1.0   <JSON body>
 *
 * authenticated (SigV4 against ddb_internal.access_keys, or the fixed role
 * of ddb.http_auth = 'none'), then run by ddb_api_execute in a transaction
 * of its own as the key's role, and answered with DynamoDB's response
 * headers (x-amzn-RequestId, x-amz-crc32).  An ERROR becomes DynamoDB's
 * error response through ddb_error_kind; anything that is no DynamoDB
 * error is logged and answered 500 InternalServerError, never with
 * PostgreSQL's message.  GET / answers DynamoDB's health check.
 *
 * Decisions, and why:
 *
 * - No internal threads.  A backend is single-threaded (palloc, elog,
 *   longjmp error recovery, the latch), so libmicrohttpd runs in "external
 *   polling" mode with epoll (MHD_USE_EPOLL without an internal thread):
 *   the worker waits in WaitEventSetWait on its latch, postmaster death,
 *   the listening sockets and libmicrohttpd's epoll descriptor, with
 *   libmicrohttpd's own timeout, then calls MHD_run.  Every callback runs
 *   in the worker's thread; the access handler catches every ERROR itself
 *   (PG_TRY), so no longjmp ever crosses libmicrohttpd's frames, and
 *   transport buffers are malloc'd, not palloc'd, for the same reason.
 *
 * - One listening socket per address, opened by the postmaster and
 *   inherited by every worker, rather than SO_REUSEPORT.  With SO_REUSEPORT
 *   the kernel hashes each connection to one worker's socket when it
 *   arrives, busy or not, so two keep-alive clients land on the same worker
 *   half of the time, and a worker's queued connections are reset when it
 *   exits.  With a shared socket, connections wait in the backlog while a
 *   worker restarts, and a port that cannot be bound stops the server at
 *   startup with PostgreSQL's own kind of message instead of workers
 *   failing one by one.  The sockets are opened from shmem_startup_hook
 *   (after "postgres -C" has exited; once per postmaster, crash-restarts
 *   keep them) and are close-on-exec, so programs the server runs do not
 *   inherit them.  (EXEC_BACKEND builds cannot inherit sockets and are not
 *   supported.)
 *
 * - The least loaded worker accepts.  A worker accepts one connection at a
 *   time itself (non-blocking; a worker that loses the race sees EAGAIN)
 *   and hands it to libmicrohttpd (MHD_USE_NO_LISTEN_SOCKET,
 *   MHD_add_connection), and only while no idle worker holds fewer
 *   connections (counts, and whether each worker is running a request, in
 *   shared memory): that worker is woken by the same connection and takes
 *   it.  libmicrohttpd's own accept
 *   loop takes a burst of connections into whichever worker wakes first,
 *   and keep-alive clients stay where they land, so two clients could
 *   share one worker while the other idles.  A worker that lets a
 *   connection pass stops polling the sockets for ACCEPT_PAUSE_MS, and
 *   takes a connection anyway once it has let it pass ACCEPT_MAX_PAUSES
 *   times (the idle worker may be slow to be scheduled) -- unless it holds
 *   DDB_HTTP_MAX_CONNS while another worker has room (busy with a long
 *   request, say): libmicrohttpd would close the connection unanswered.
 *   When every worker is at the limit, one takes it and so closes it,
 *   rather than leave it waiting with the workers polling for it.
 *
 * - One transaction per request, in a per-request memory context reset
 *   after each one, so a failed request rolls back and nothing it
 *   allocated outlives it.  The key lookup, the signature check and the
 *   operation share the transaction's snapshot.
 *
 * - The role: the worker connects as the bootstrap superuser and runs each
 *   operation under SetUserIdAndSecContext(key's role,
 *   SECURITY_LOCAL_USERID_CHANGE), which abort restores; the functions'
 *   own privilege checks and the RLS refusal see that role.
 *
 * - Bodies are held whole until the request is served (the signature
 *   covers the body's hash, so nobody is authenticated before it is in),
 *   so a worker bounds what all its connections hold together:
 *   DDB_HTTP_MAX_BUFFERED.  What counts is what has arrived (a buffer grows
 *   as the body comes, up to its declared length), not what a client
 *   declares: charging Content-Length up front let a few connections that
 *   declared 16 MB and sent nothing throttle everyone.  A request that
 *   starts while the worker already holds the bound is answered at once
 *   with DynamoDB's ThrottlingException, which SDKs retry; a body that
 *   grows past it is dropped, as one past 16 MB is.  Without the bound,
 *   anyone who can connect could make each worker hold 256 connections x
 *   16 MB.
 *
 * - Responses are held whole until sent, and a client need not read
 *   them: one that sends a request on each of its connections and reads
 *   nothing leaves a worker holding every response (a BatchGetItem's may
 *   be 16 MB) until libmicrohttpd's inactivity timeout, so 256
 *   connections could make a worker hold 4 GB.  A worker therefore
 *   counts the responses it has not finished sending (libmicrohttpd
 *   tells when it lets one go), and while they come to
 *   DDB_HTTP_MAX_UNSENT answers a request with ThrottlingException instead
 *   of running it.
 *
 * - Time limits.  A worker serves one request at a time, so a request that
 *   waits -- for a lock an open SQL transaction holds, say -- stalls every
 *   connection of its worker, and a few such requests the endpoint.
 *   DynamoDB never waits: a request waits for a lock at most
 *   ddb.http_lock_timeout (PostgreSQL's lock_timeout in the worker; past it
 *   TransactionConflictException), and runs at most ddb.http_request_timeout
 *   (the statement timeout, armed around the operation; past it
 *   InternalServerError, which SDKs retry, and a line in the server log).
 *
 * - Deadlines.  libmicrohttpd's connection timeout measures inactivity, so
 *   a client that sends a request a byte every few seconds holds its
 *   connection for ever, and 256 such clients a worker.  Each connection
 *   therefore has a clock (ConnClock) that runs while a request is arriving
 *   or awaited: started when the connection opens and again when a request
 *   on it completes (its response sent), stopped once the whole request is
 *   in.  A connection whose clock passes ddb.http_idle_timeout is shut down
 *   (shutdown(2) on its socket; libmicrohttpd then closes it).  That also
 *   bounds an idle keep-alive connection, as libmicrohttpd's own timeout
 *   does.  The time the worker spends serving a request is not charged to
 *   its other connections (their clocks are moved on by it: their data may
 *   have waited unread meanwhile), and a request being served, or its
 *   response being sent, is never cut.
 *
 * - TLS.  With ddb.http_ssl_cert_file and ddb.http_ssl_key_file the
 *   daemons speak HTTPS only (MHD_USE_TLS; libmicrohttpd does the
 *   handshakes on the connections the workers hand it, as it parses
 *   HTTP).  The postmaster reads the PEM files as it opens the sockets and
 *   tries them on a daemon it starts and stops (load_tls_files), so a bad
 *   file stops the server at startup rather than each worker at each
 *   restart; the workers inherit the text.  The workers read each
 *   connection's socket for GnuTLS themselves (tls_pull), to cap what a
 *   client may send that neither finishes a handshake nor reaches the
 *   request handler (TLS_MAX_PENDING_BYTES).
 *
 * - A database that is not ready.  The workers start with the server,
 *   maybe before ddb.http_database exists or has the extension, and a
 *   client must get an answer then too: neither a connection that waits
 *   for ever nor an error that SDKs retry for half a minute.  Without the
 *   extension a worker answers every request with NOT_READY_ERROR saying
 *   what to run, and the log says it once (until the extension is there).
 *   Without the database PostgreSQL ends the worker while it connects
 *   (FATAL), before any code of ours runs: restarted every 5 s, such a
 *   worker never served, and its clients waited in the backlog.  So a
 *   worker marks in shared memory that it is connecting, and one that
 *   starts with the mark still set (its last start failed there) connects
 *   to no database instead: it reads pg_database (a shared catalog), says
 *   once in the log what is wrong, answers every request with
 *   NOT_READY_ERROR saying the same, and looks again every
 *   DB_CHECK_MS; once the database takes connections it exits, and is
 *   restarted (bgw_restart_time later) connected to it.  The error is
 *   AccessDeniedException (400): no SDK retries it (they retry 5xx and
 *   throttling errors), applications do not take it for a missing table
 *   or item as they take ResourceNotFoundException, and SDKs and the AWS
 *   CLI show its message as it is.  GET /, the health check load
 *   balancers and scripts wait on, answers 503 meanwhile, with a line
 *   that says what is missing (not "healthy").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/jsonapi.h"
#include "common/string.h"
#include "lib/ilist.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/pg_crc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "common/pg_prng.h"

#include "api/ddb_protocol.h"
#include "http/ddb_http.h"

/* DynamoDB's request size limit: larger bodies are refused with 413. */
#define DDB_HTTP_MAX_BODY		(16 * 1024 * 1024)
#define DDB_HTTP_MAX_BUFFERED	(4 * DDB_HTTP_MAX_BODY)	/* per worker, see above */
/* responses computed and not yet sent, per worker, see "Responses" above */
#define DDB_HTTP_MAX_UNSENT		(4 * DDB_HTTP_MAX_BODY)
/* an oversized body up to this is read (and dropped) to answer 413 cleanly */
#define DDB_HTTP_MAX_DISCARD	(4 * DDB_HTTP_MAX_BODY)
/* Connections one worker holds at once (idle keep-alive ones included). */
#define DDB_HTTP_MAX_CONNS		256
#define DDB_HTTP_MAX_SOCKETS	16
#define DDB_HTTP_BACKLOG		1024

/* The answer while ddb.http_database cannot serve (see the file header). */
#define NOT_READY_ERROR			DDB_HTTP_CORAL "AccessDeniedException"
/* how often a worker connected to no database looks at pg_database (ms) */
#define DB_CHECK_MS				1000

#define TARGET_DYNAMODB			"DynamoDB_20120810"
#define TARGET_STREAMS			"DynamoDBStreams_20120810"
#define DYNAMODB_ERROR_PREFIX	"com.amazonaws.dynamodb.v20120810#"

/* --- settings ------------------------------------------------------------ */

typedef enum
{
	DDB_HTTP_AUTH_SIGV4,
	DDB_HTTP_AUTH_NONE
} DdbHttpAuth;

static const struct config_enum_entry auth_options[] = {
	{"sigv4", DDB_HTTP_AUTH_SIGV4, false},
	{"none", DDB_HTTP_AUTH_NONE, false},
	{NULL, 0, false}
};

static int	http_port = 8000;
static char *http_listen_addresses = NULL;
static int	http_workers = 4;
static char *http_database = NULL;
static int	http_auth = DDB_HTTP_AUTH_SIGV4;
static char *http_role = NULL;
static int	http_idle_timeout = 60;
static int	http_lock_timeout = 5000;	/* ms; 0 = wait as long as it takes */
static int	http_request_timeout = 60000;	/* ms; 0 = no limit */
static char *http_ssl_cert_file = NULL;
static char *http_ssl_key_file = NULL;

/*
 * With both ddb.http_ssl_* set, the endpoint speaks HTTPS only: the
 * postmaster reads the files once, as it opens the sockets, and checks
 * that libmicrohttpd (with GnuTLS) takes them, so a missing or bad file
 * stops the server at startup as a bad ssl_cert_file stops PostgreSQL's;
 * the workers inherit the PEM text.  NULL: plain HTTP.
 */
static char *tls_cert_pem = NULL;
static char *tls_key_pem = NULL;

/*
 * GnuTLS's defaults without TLS 1.0 and 1.1 and without key exchange by
 * RSA encryption (no forward secrecy): TLS 1.2 at least, as PostgreSQL's
 * own ssl_min_protocol_version.
 */
#define TLS_PRIORITIES	"NORMAL:-VERS-TLS1.0:-VERS-TLS1.1:-RSA"

/*
 * The bytes an HTTPS client may send that neither finish its handshake nor
 * reach the request handler.  GnuTLS takes in a handshake message whole,
 * up to the 16 MB its length field allows, before it looks at its size
 * (gnutls_handshake_set_max_packet_length is checked only then): during
 * the handshake, and in TLS 1.3 after it too (a KeyUpdate, which holds
 * back the application data behind it), so a connection that never
 * completed one could hold that much of a worker's memory until the idle
 * timeout.  A client here sends a ClientHello and, in TLS 1.2, its key
 * exchange and Finished, never a certificate: a few kB.  Application data
 * reaches the handler in pieces of libmicrohttpd's read buffer (32 kB)
 * and a record at most.  Counted by tls_pull, which reads the connection's
 * socket for GnuTLS; the count starts again at the client's Finished
 * (tls_finished_hook) and at each call of the handler (access_handler).
 */
#define TLS_MAX_PENDING_BYTES	(64 * 1024)

/* The listening sockets, opened by the postmaster, inherited by workers. */
static int	listen_socks[DDB_HTTP_MAX_SOCKETS];
static int	n_listen_socks = 0;
static bool listen_done = false;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;

/*
 * Each worker's load, in shared memory: the connections it holds
 * (PG_UINT32_MAX while it is not running, so that nobody defers to it) and
 * whether it is running a request; and whether it was connecting to
 * ddb.http_database (see "A database that is not ready" in the file
 * header).  Reset with shared memory after a crash.
 */
#define NOT_RUNNING		PG_UINT32_MAX
typedef struct WorkerLoad
{
	pg_atomic_uint32 conns;
	pg_atomic_uint32 busy;
	pg_atomic_uint32 connecting;	/* still 1 when it starts again: it failed */
} WorkerLoad;

/* What the workers share: their loads, and what the log has said once. */
typedef struct HttpShared
{
	pg_atomic_uint32 logged_database;	/* the DbState the log gave last */
	pg_atomic_uint32 logged_no_extension;	/* ddb is not installed there */
	WorkerLoad	workers[FLEXIBLE_ARRAY_MEMBER];
} HttpShared;
static HttpShared *http_shared = NULL;
static WorkerLoad *worker_load = NULL;	/* http_shared->workers */
static int	my_worker = -1;

/*
 * Why this worker serves no request, when it is connected to no database
 * (see "A database that is not ready"): the message every request is
 * answered with.  NULL in a worker connected to ddb.http_database.
 */
static char *unserved_message = NULL;

/* What keeps a worker from connecting to ddb.http_database. */
typedef enum DbState
{
	DB_READY,
	DB_MISSING,
	DB_NO_CONNECTIONS
} DbState;

/* this worker's, when it is connected to no database */
static DbState unserved_state = DB_READY;

/*
 * Every this many requests, between two of them, a worker lets ddb's
 * caches forget the tables dropped since (ddb_forget_dropped_tables): a
 * pass over the cached tables, one catalog lookup each.
 */
#define DDB_HTTP_SWEEP_EVERY	64
static int	requests_since_sweep = 0;

/* How long a worker that let a connection pass stops polling (ms), and how
 * many such pauses before it takes a waiting connection anyway. */
#define ACCEPT_PAUSE_MS		2
#define ACCEPT_MAX_PAUSES	250

/*
 * The operations of DynamoDB's two JSON services (AWS's API reference).  A
 * target outside these lists is DynamoDB's UnknownOperationException,
 * before authentication, as DynamoDB answers it; an operation in the list
 * that ddb_api does not implement is ddb_api_execute's to refuse.
 */
static const char *const dynamodb_operations[] = {
	"BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CreateBackup",
	"CreateGlobalTable", "CreateTable", "DeleteBackup", "DeleteItem",
	"DeleteResourcePolicy", "DeleteTable", "DescribeBackup",
	"DescribeContinuousBackups", "DescribeContributorInsights",
	"DescribeEndpoints", "DescribeExport", "DescribeGlobalTable",
	"DescribeGlobalTableSettings", "DescribeImport",
	"DescribeKinesisStreamingDestination", "DescribeLimits", "DescribeTable",
	"DescribeTableReplicaAutoScaling", "DescribeTimeToLive",
	"DisableKinesisStreamingDestination", "EnableKinesisStreamingDestination",
	"ExecuteStatement", "ExecuteTransaction", "ExportTableToPointInTime",
	"GetItem", "GetResourcePolicy", "ImportTable", "ListBackups",
	"ListContributorInsights", "ListExports", "ListGlobalTables", "ListImports",
	"ListTables", "ListTagsOfResource", "PutItem", "PutResourcePolicy", "Query",
	"RestoreTableFromBackup", "RestoreTableToPointInTime", "Scan", "TagResource",
	"TransactGetItems", "TransactWriteItems", "UntagResource",
	"UpdateContinuousBackups", "UpdateContributorInsights", "UpdateGlobalTable",
	"UpdateGlobalTableSettings", "UpdateItem", "UpdateKinesisStreamingDestination",
	"UpdateTable", "UpdateTableReplicaAutoScaling", "UpdateTimeToLive", NULL
};
static const char *const streams_operations[] = {
	"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams", NULL
};

/* --- startup: GUCs, workers ------------------------------------------- */

static void open_listen_sockets(void);

static Size
http_shared_size(void)
{
	return add_size(offsetof(HttpShared, workers),
					mul_size(http_workers, sizeof(WorkerLoad)));
}

static void
http_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(http_shared_size());
}

static void
http_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	http_shared = ShmemInitStruct("ddb http workers", http_shared_size(), &found);
	worker_load = http_shared->workers;
	if (!found)
	{
		pg_atomic_init_u32(&http_shared->logged_database, 0);	/* DB_READY */
		pg_atomic_init_u32(&http_shared->logged_no_extension, 0);
		for (int i = 0; i < http_workers; i++)
		{
			pg_atomic_init_u32(&worker_load[i].conns, NOT_RUNNING);
			pg_atomic_init_u32(&worker_load[i].busy, 0);
			pg_atomic_init_u32(&worker_load[i].connecting, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);

	/* the postmaster only, once: crash-restarts keep the sockets */
	if (!IsUnderPostmaster && !listen_done)
	{
		open_listen_sockets();
		listen_done = true;
	}
}

/*
 * Defines the endpoint's settings and, when the library is preloaded and
 * the endpoint is on, registers its workers.  Must run in _PG_init before
 * MarkGUCPrefixReserved("ddb"), which would otherwise drop the values
 * postgresql.conf gave these settings.
 */
void
ddb_http_init(void)
{
	static bool done = false;
	BackgroundWorker worker;

	if (done)
		return;
	done = true;

	/*
	 * The settings are PGC_POSTMASTER, which only a preloaded library may
	 * define (as pg_stat_statements does): without preloading there is no
	 * endpoint, and ddb.http_* in postgresql.conf draws a warning.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("ddb.http_port",
							"TCP port of the DynamoDB HTTP endpoint (0 = off).",
							"Needs shared_preload_libraries = 'ddb'.",
							&http_port, 8000, 0, 65535,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("ddb.http_listen_addresses",
							   "Addresses the DynamoDB HTTP endpoint listens on.",
							   "A comma-separated list of host names or IP addresses; '*' for all.",
							   &http_listen_addresses, "127.0.0.1",
							   PGC_POSTMASTER, GUC_LIST_INPUT, NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.http_workers",
							"Number of background workers serving the DynamoDB HTTP endpoint.",
							"Each is a backend and takes a max_worker_processes slot.",
							&http_workers, 4, 1, 64,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("ddb.http_database",
							   "Database the DynamoDB HTTP endpoint's workers connect to.",
							   NULL,
							   &http_database, "postgres",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("ddb.http_auth",
							 "How the DynamoDB HTTP endpoint authenticates requests.",
							 "sigv4: AWS Signature Version 4 with keys from ddb_create_access_key; "
							 "none: every request runs as ddb.http_role (loopback addresses only).",
							 &http_auth, DDB_HTTP_AUTH_SIGV4, auth_options,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("ddb.http_role",
							   "Role every request runs as when ddb.http_auth = 'none'.",
							   NULL,
							   &http_role, "",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.http_lock_timeout",
							"How long a request of the DynamoDB HTTP endpoint waits for a lock.",
							"Past it the request fails with TransactionConflictException, as DynamoDB "
							"fails rather than waits; 0 waits as long as it takes.",
							&http_lock_timeout, 5000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.http_request_timeout",
							"How long a request of the DynamoDB HTTP endpoint may run.",
							"Past it the request fails with InternalServerError, which SDKs retry; 0 = no limit.",
							&http_request_timeout, 60000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.http_idle_timeout",
							"Seconds an HTTP connection may stay idle or half-sent before it is closed.",
							NULL,
							&http_idle_timeout, 60, 1, 86400,
							PGC_POSTMASTER, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomStringVariable("ddb.http_ssl_cert_file",
							   "PEM file of the DynamoDB HTTP endpoint's TLS certificate (and chain).",
							   "With ddb.http_ssl_key_file, the endpoint serves HTTPS only; "
							   "a relative path is relative to the data directory.",
							   &http_ssl_cert_file, "",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("ddb.http_ssl_key_file",
							   "PEM file of the DynamoDB HTTP endpoint's TLS private key.",
							   NULL,
							   &http_ssl_key_file, "",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);

	if (http_port == 0)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = http_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = http_shmem_startup;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a hot standby serves reads; writes there fail as any write would */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddb");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "ddb_http_worker_main");
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddb http");
	for (int i = 0; i < http_workers; i++)
	{
		snprintf(worker.bgw_name, BGW_MAXLEN, "ddb http worker %d", i + 1);
		worker.bgw_main_arg = Int32GetDatum(i);
		RegisterBackgroundWorker(&worker);
	}
}

/* --- listening sockets (postmaster) ------------------------------------ */

static bool
is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
	{
		const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
			(IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/*
 * Does 'host' (a Host header's value, or an Origin's host and port) name
 * this machine's loopback: localhost or a name under .localhost, an IPv4
 * address in 127/8, [::1]; with or without a port?  ddb.http_auth = 'none'
 * answers only requests addressed so, and CORS only for pages served so.
 * A page of another site can make the browser send requests to the
 * endpoint (a preflight asks first, as X-Amz-Target is not a header pages
 * may send freely) and, once its name resolves to 127.0.0.1 (DNS
 * rebinding), even without CORS: its requests carry its own name as Host.
 * With signatures neither matters, the page has no key.
 */
static bool
loopback_host(const char *host)
{
	char		name[256];
	size_t		len;
	const char *end;
	bool		bracketed = host[0] == '[';
	struct sockaddr_storage ss;

	/* the name or address, and an optional port after it */
	if (bracketed)
	{
		host++;
		end = strchr(host, ']');
		if (end == NULL)
			return false;
	}
	else
		end = host + strcspn(host, ":");
	len = end - host;
	if (bracketed)
		end++;
	if (*end == ':')
	{
		if (end[1] == '\0' || strspn(end + 1, "0123456789") != strlen(end + 1))
			return false;
	}
	else if (*end != '\0')
		return false;
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, host, len);
	name[len] = '\0';

	/* an address: is_loopback's judgement, as for the listening sockets */
	memset(&ss, 0, sizeof(ss));
	if (bracketed)
	{
		ss.ss_family = AF_INET6;
		return inet_pton(AF_INET6, name, &((struct sockaddr_in6 *) &ss)->sin6_addr) == 1 &&
			is_loopback((struct sockaddr *) &ss);
	}
	ss.ss_family = AF_INET;
	if (inet_pton(AF_INET, name, &((struct sockaddr_in *) &ss)->sin_addr) == 1)
		return is_loopback((struct sockaddr *) &ss);

	/* a name: localhost, or one under .localhost (RFC 6761) */
	if (name[len - 1] == '.')
		name[--len] = '\0';	/* a fully qualified "localhost." */
	return pg_strcasecmp(name, "localhost") == 0 ||
		(len > strlen(".localhost") &&
		 pg_strcasecmp(name + len - strlen(".localhost"), ".localhost") == 0);
}

/* An Origin's host and port, for loopback_host: "http://h:p" or "https://h:p" */
static bool
loopback_origin(const char *origin)
{
	if (strncmp(origin, "http://", 7) == 0)
		origin += 7;
	else if (strncmp(origin, "https://", 8) == 0)
		origin += 8;
	else
		return false;
	return loopback_host(origin);
}

/*
 * A whole file of at most 1 MB, NUL-terminated, malloc'd (the
 * postmaster's, kept for its children); FATAL when it cannot be read.
 */
static char *
read_pem_file(const char *setting, const char *path)
{
	FILE	   *f = fopen(path, "r");
	char	   *buf = NULL;
	size_t		len = 0;
	size_t		cap = 0;
	size_t		n;

	if (f == NULL)
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not open %s \"%s\": %m", setting, path)));
	do
	{
		if (cap - len < 4096)
		{
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			if (buf == NULL)
				ereport(FATAL, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0 && len < 1024 * 1024);
	if (ferror(f))
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not read %s \"%s\": %m", setting, path)));
	if (len >= 1024 * 1024)
		ereport(FATAL,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" is larger than 1 MB", setting, path)));
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/*
 * PostgreSQL's check of its own ssl_key_file (be-secure-common.c), declared
 * in libpq/libpq.h, which needs the GSSAPI headers through libpq-be.h.
 */
extern bool check_ssl_key_file_permissions(const char *ssl_key_file, bool isServerStart);

/* what libmicrohttpd said while the postmaster tried the TLS files */
static char tls_check_msg[512];

static void
tls_check_log(void *cls, const char *fmt, va_list ap)
{
	vsnprintf(tls_check_msg, sizeof(tls_check_msg), fmt, ap);
}

/* (the check's daemon serves nothing) */
static enum MHD_Result
refuse_all(void *cls, struct MHD_Connection *connection, const char *url,
		   const char *method, const char *version, const char *upload_data,
		   size_t *upload_data_size, void **con_cls)
{
	return MHD_NO;
}

/*
 * ddb.http_ssl_cert_file and ddb.http_ssl_key_file: both or neither; the
 * key owned and readable as PostgreSQL requires of its ssl_key_file; read,
 * and tried by starting (and stopping) a libmicrohttpd daemon with them,
 * which loads them through GnuTLS as each worker's will.
 */
static void
load_tls_files(void)
{
	bool		cert = http_ssl_cert_file != NULL && http_ssl_cert_file[0] != '\0';
	bool		key = http_ssl_key_file != NULL && http_ssl_key_file[0] != '\0';
	struct MHD_Daemon *d;

	if (!cert && !key)
		return;
	if (!cert || !key)
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ddb.http_ssl_cert_file and ddb.http_ssl_key_file must be set together")));
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		ereport(FATAL,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this libmicrohttpd was built without TLS, which ddb.http_ssl_cert_file needs")));
	/* the key's owner and mode, as PostgreSQL checks its ssl_key_file */
	(void) check_ssl_key_file_permissions(http_ssl_key_file, true);
	tls_cert_pem = read_pem_file("ddb.http_ssl_cert_file", http_ssl_cert_file);
	tls_key_pem = read_pem_file("ddb.http_ssl_key_file", http_ssl_key_file);
	tls_check_msg[0] = '\0';
	d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_TLS | MHD_USE_ERROR_LOG,
						 0, NULL, NULL, refuse_all, NULL,
						 MHD_OPTION_EXTERNAL_LOGGER, tls_check_log, NULL,
						 MHD_OPTION_HTTPS_MEM_KEY, tls_key_pem,
						 MHD_OPTION_HTTPS_MEM_CERT, tls_cert_pem,
						 MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
						 MHD_OPTION_END);
	if (d == NULL)
		ereport(FATAL,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not load the TLS certificate \"%s\" and key \"%s\" of ddb's HTTP endpoint",
						http_ssl_cert_file, http_ssl_key_file),
				 tls_check_msg[0] ? errdetail("libmicrohttpd: %s", tls_check_msg) : 0));
	MHD_stop_daemon(d);
}

/*
 * Opens a listening socket on every address of ddb.http_listen_addresses,
 * as PostgreSQL opens listen_addresses: an address that cannot be bound is
 * a warning, none at all is fatal.  With ddb.http_auth = 'none' every
 * address must be a loopback address, or the server does not start.
 */
static void
open_listen_sockets(void)
{
	char	   *raw = pstrdup(http_listen_addresses);
	List	   *addrs;
	ListCell   *lc;
	char		portstr[16];

	if (http_auth == DDB_HTTP_AUTH_NONE && (http_role == NULL || http_role[0] == '\0'))
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ddb.http_auth = 'none' needs ddb.http_role"),
				 errhint("Set ddb.http_role to the role every HTTP request should run as.")));

	load_tls_files();
	if (!SplitGUCList(raw, ',', &addrs))
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid list syntax in parameter \"%s\"", "ddb.http_listen_addresses")));
	snprintf(portstr, sizeof(portstr), "%d", http_port);

	foreach(lc, addrs)
	{
		char	   *host = lfirst(lc);
		struct addrinfo hints;
		struct addrinfo *res;
		struct addrinfo *ai;
		int			rc;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_PASSIVE;
		rc = getaddrinfo(strcmp(host, "*") == 0 ? NULL : host, portstr, &hints, &res);
		if (rc != 0)
		{
			ereport(WARNING,
					(errmsg("could not translate host name \"%s\" of ddb.http_listen_addresses: %s",
							host, gai_strerror(rc))));
			continue;
		}
		for (ai = res; ai; ai = ai->ai_next)
		{
			int			fd;
			int			one = 1;

			if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
				continue;
			if (http_auth == DDB_HTTP_AUTH_NONE && !is_loopback(ai->ai_addr))
				ereport(FATAL,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("ddb.http_auth = 'none' refuses to listen on \"%s\", which is not a loopback address",
								host),
						 errdetail("Without authentication every request runs as role \"%s\".", http_role),
						 errhint("Set ddb.http_listen_addresses to 127.0.0.1 or ::1, or use ddb.http_auth = 'sigv4'.")));
			if (n_listen_socks >= DDB_HTTP_MAX_SOCKETS)
			{
				ereport(WARNING,
						(errmsg("too many addresses in ddb.http_listen_addresses; ignoring the rest")));
				break;
			}
			fd = socket(ai->ai_family, SOCK_STREAM, 0);
			if (fd < 0)
			{
				ereport(WARNING,
						(errcode_for_socket_access(),
						 errmsg("could not create HTTP socket for \"%s\": %m", host)));
				continue;
			}
			(void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (ai->ai_family == AF_INET6)
				(void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
				listen(fd, DDB_HTTP_BACKLOG) < 0 ||
				fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
				/* every worker polls it; the losers of a race must not block */
				fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
			{
				ereport(WARNING,
						(errcode_for_socket_access(),
						 errmsg("could not listen on \"%s\" port %d for ddb's HTTP endpoint: %m",
								host, http_port),
						 errhint("Is another server already running on port %d?", http_port)));
				close(fd);
				continue;
			}
			listen_socks[n_listen_socks++] = fd;
		}
		freeaddrinfo(res);
	}
	if (n_listen_socks == 0)
		ereport(FATAL,
				(errmsg("could not create any listening socket for ddb's HTTP endpoint (ddb.http_listen_addresses = '%s', ddb.http_port = %d)",
						http_listen_addresses, http_port)));
	ereport(LOG,
			(errmsg("ddb HTTP endpoint listening on %s port %d (%s, %d workers, auth %s)",
					http_listen_addresses, http_port, tls_cert_pem ? "HTTPS" : "HTTP",
					http_workers, http_auth == DDB_HTTP_AUTH_NONE ? "none" : "sigv4")));
}

/* --- the worker ---------------------------------------------------------- */

/* A request being received: malloc'd, owned by libmicrohttpd's con_cls. */
typedef struct HttpRequest
{
	char	   *body;
	size_t		len;
	size_t		cap;			/* allocated, counted in 'buffered' */
	size_t		declared;		/* Content-Length, 0 when none */
	bool		too_large;		/* over 16 MB: read, dropped, answered 413 */
} HttpRequest;

/* the body bytes this worker's connections hold (their caps) */
static size_t buffered = 0;

/* the bytes of the responses libmicrohttpd holds, not yet (all) sent */
static size_t unsent = 0;

/* One open connection's clock (see "Deadlines" above). */
typedef struct ConnClock
{
	dlist_node	node;
	int			fd;
	TimestampTz since;			/* opened, or its last request completed;
								 * DT_NOEND while a request is served */
	size_t		tls_pending;	/* HTTPS: bytes read since the count last
								 * started again (TLS_MAX_PENDING_BYTES) */
} ConnClock;

static dlist_head conn_clocks = DLIST_STATIC_INIT(conn_clocks);

static void clocks_pause(TimestampTz elapsed);

/* A response being built, in the request's memory context. */
typedef struct HttpResponse
{
	int			status;
	const char *content_type;
	StringInfoData body;
	bool		preflight;		/* the answer to a CORS preflight (OPTIONS) */
	bool		close;			/* close the connection after it */
} HttpResponse;

static MemoryContext request_cxt = NULL;

/*
 * 's' with each byte that does not start a valid UTF-8 sequence replaced by
 * U+FFFD: error messages quote what the client sent (a malformed
 * X-Amz-Date, the canonical request's headers), and the response must stay
 * UTF-8 for clients to parse it.
 */
static const char *
valid_utf8(const char *s)
{
	StringInfoData buf;
	const unsigned char *p = (const unsigned char *) s;
	int			len = strlen(s);

	if (pg_verify_mbstr(PG_UTF8, s, len, true))
		return s;
	initStringInfo(&buf);
	while (len > 0)
	{
		int			l = pg_utf_mblen(p);

		if (l <= len && pg_utf8_islegal(p, l))
		{
			appendBinaryStringInfo(&buf, (const char *) p, l);
			p += l;
			len -= l;
		}
		else
		{
			appendStringInfoString(&buf, "\xEF\xBF\xBD");
			p++;
			len--;
		}
	}
	return buf.data;
}

static void
json_error(HttpResponse *resp, int status, const char *type, const char *message)
{
	resp->status = status;
	resetStringInfo(&resp->body);
	appendStringInfoString(&resp->body, "{\"__type\":");
	escape_json(&resp->body, type);
	if (message)
	{
		/*
		 * DynamoDB spells the member "Message" in these two, "message" in
		 * the others (as recorded by dynalite); SDKs read either
		 */
		bool		capital = pg_str_endswith(type, "#SerializationException") ||
			pg_str_endswith(type, "#AccessDeniedException");

		appendStringInfoString(&resp->body, capital ? ",\"Message\":" : ",\"message\":");
		escape_json(&resp->body, valid_utf8(message));
	}
	appendStringInfoChar(&resp->body, '}');
}

static void
http_error(HttpResponse *resp, const DdbHttpError *err)
{
	json_error(resp, err->status, err->type, err->message);
}

static bool body_is_json_object(char *body, size_t len);

/* deeper than ddb_json.c's parser takes (200), shallow enough for any stack */
#define DDB_HTTP_MAX_PRECHECK_DEPTH	256

/*
 * An ERROR caught while serving becomes DynamoDB's error response.  Errors
 * that ddb_error_kind does not know are logged here and answered 500
 * InternalServerError with a fixed message.
 */
static void
error_response(HttpResponse *resp, ErrorData *edata, const char *target, const char *role)
{
	const char *prefix = NULL;
	int			status = 400;
	const char *kind = ddb_error_kind(edata->sqlerrcode, &prefix, &status);

	if (kind != NULL)
	{
		const char *msg = edata->message ? edata->message : "";
		size_t		klen = strlen(kind);
		char	   *type;
		const char *own;

		/* the message is "<Kind>: <DynamoDB's text>"; the client gets the text */
		if (strncmp(msg, kind, klen) == 0 && msg[klen] == ':' && msg[klen + 1] == ' ')
			msg += klen + 2;
		/* PostgreSQL's own text names the server's objects: DynamoDB's instead */
		own = ddb_error_client_message(edata->sqlerrcode, msg, role,
									   target && strchr(target, '.') ? strchr(target, '.') + 1 : NULL);
		if (own != NULL)
			msg = own;
		type = psprintf("%s%s", prefix ? prefix : DYNAMODB_ERROR_PREFIX, kind);
		json_error(resp, status, type, msg);

		/*
		 * A DETAIL that is a JSON object holds more members of the error
		 * response (ConditionalCheckFailedException's Item, for one); see
		 * ddb_protocol.h.  Any other DETAIL is for humans only.
		 */
		if (edata->detail && edata->detail[0] == '{' &&
			body_is_json_object(edata->detail, strlen(edata->detail)))
		{
			const char *members = edata->detail + 1;

			while (*members == ' ' || *members == '\n')
				members++;
			if (*members != '}')
			{
				/* {"__type":...,"message":...} + , + members...} */
				resp->body.len--;
				resp->body.data[resp->body.len] = '\0';
				appendStringInfoChar(&resp->body, ',');
				appendStringInfoString(&resp->body, members);
			}
		}
		return;
	}

	ereport(LOG,
			(errcode(edata->sqlerrcode),
			 errmsg("ddb HTTP request %s failed: %s", target ? target : "(none)",
					edata->message ? edata->message : "(no message)"),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 edata->hint ? errhint("%s", edata->hint) : 0,
			 edata->context ? errcontext("%s", edata->context) : 0));
	json_error(resp, 500, DYNAMODB_ERROR_PREFIX "InternalServerError", "Internal server error");
}

static bool
in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

/* Collects headers or query arguments into the request view's arrays. */
typedef struct ValueCollector
{
	int			n;
	int			max;
	const char **names;
	const char **values;
} ValueCollector;

static enum MHD_Result
collect_value(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	ValueCollector *c = cls;

	/* no allocation here: this runs inside libmicrohttpd */
	if (c->n < c->max)
	{
		c->names[c->n] = key;
		c->values[c->n] = value;
		c->n++;
	}
	return MHD_YES;
}

static void
collect(struct MHD_Connection *conn, enum MHD_ValueKind kind, int *n,
		const char ***names, const char ***values)
{
	ValueCollector c;

	c.max = MHD_get_connection_values(conn, kind, NULL, NULL);
	c.n = 0;
	c.names = palloc(sizeof(char *) * (c.max + 1));
	c.values = palloc(sizeof(char *) * (c.max + 1));
	MHD_get_connection_values(conn, kind, collect_value, &c);
	*n = c.n;
	*names = c.names;
	*values = c.values;
}

/*
 * How deeply the body's arrays and objects nest (brackets outside strings),
 * stopping once past 'limit'.
 */
static int
json_nesting(const char *body, size_t len, int limit)
{
	int			depth = 0,
				max = 0;
	bool		in_string = false;

	for (size_t i = 0; i < len && max <= limit; i++)
	{
		char		c = body[i];

		if (in_string)
		{
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		}
		else if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			max = Max(max, ++depth);
		else if (c == '}' || c == ']')
			depth--;
	}
	return max;
}

/*
 * Is the body one syntactically valid JSON object?  A body nested deeper
 * than the protocol's parser takes is let through: that parser refuses it
 * with its SerializationException ("nests too deeply"), where
 * pg_parse_json, which recurses per level, would run out of stack and the
 * client would get a 500.
 */
static bool
body_is_json_object(char *body, size_t len)
{
	JsonLexContext *lex;
	size_t		i = 0;

	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'))
		i++;
	if (i == len || body[i] != '{' || len > INT_MAX)
		return false;
	if (json_nesting(body, len, DDB_HTTP_MAX_PRECHECK_DEPTH) > DDB_HTTP_MAX_PRECHECK_DEPTH)
		return true;
	lex = makeJsonLexContextCstringLen(body, (int) len, PG_UTF8, false);
	return pg_parse_json(lex, &nullSemAction) == JSON_SUCCESS;
}

/*
 * The answer to every request while ddb.http_database has no extension
 * ddb, which the log gives once (see "A database that is not ready").
 */
static void
answer_no_extension(HttpResponse *resp)
{
	const char *db = get_database_name(MyDatabaseId);

	if (pg_atomic_exchange_u32(&http_shared->logged_no_extension, 1) == 0)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"ddb\" is not installed in database \"%s\" (ddb.http_database)", db),
				 errdetail("ddb's HTTP endpoint answers every operation with AccessDeniedException until it is."),
				 errhint("Run CREATE EXTENSION ddb in that database.")));
	json_error(resp, 400, NOT_READY_ERROR,
			   psprintf("extension \"ddb\" is not installed in database \"%s\" (ddb.http_database): "
						"run CREATE EXTENSION ddb in that database", db));
}

/*
 * Why this worker cannot serve operations, in a few words for GET / (no
 * database or extension names: the health check answers anyone), or NULL
 * when it can.  The extension's look-up runs in a transaction of its own.
 */
static const char *
not_ready_problem(void)
{
	MemoryContext old = CurrentMemoryContext;
	bool		installed;

	if (unserved_message != NULL)
		return unserved_state == DB_MISSING ?
			"the database of ddb.http_database does not exist" :
			"the database of ddb.http_database does not allow connections";
	StartTransactionCommand();
	installed = OidIsValid(get_extension_oid("ddb", true));
	CommitTransactionCommand();
	MemoryContextSwitchTo(old); /* (the commit left TopMemoryContext) */
	return installed ? NULL :
		"extension ddb is not installed in the database of ddb.http_database";
}

/*
 * Serves one complete request into *resp.  Every ERROR is caught here;
 * the caller only hands the response to libmicrohttpd.
 */
static void
serve(struct MHD_Connection *conn, const char *url, const char *method,
	  HttpRequest *hreq, HttpResponse *resp)
{
	const char *volatile target = NULL;
	const char *volatile role_name = NULL;
	volatile bool in_xact = false;

	PG_TRY();
	{
		DdbHttpRequestView view;
		const char *ctype;
		const char *xtarget;
		const char *op = NULL;
		DdbHttpError herr;
		Oid			role = InvalidOid;
		char	   *result;
		int			resultlen;

		memset(&view, 0, sizeof(view));
		view.method = method;
		view.path = url;
		view.body = hreq->body;
		view.bodylen = hreq->len;
		collect(conn, MHD_HEADER_KIND, &view.nheaders, &view.hname, &view.hvalue);
		collect(conn, MHD_GET_ARGUMENT_KIND, &view.nargs, &view.aname, &view.avalue);

		/* without signatures: only requests addressed to the loopback */
		if (http_auth == DDB_HTTP_AUTH_NONE)
		{
			const char *host = ddb_http_header(&view, "Host");

			if (host == NULL || !loopback_host(host))
			{
				json_error(resp, 400, DDB_HTTP_CORAL "AccessDeniedException",
						   "ddb.http_auth = 'none' answers only requests addressed to a loopback name (localhost, 127.0.0.1, [::1]) in their Host header");
				goto done;
			}
		}

		/* OPTIONS: a CORS preflight, answered in send_response */
		if (strcmp(method, "OPTIONS") == 0)
		{
			resp->status = 200;
			resp->content_type = NULL;
			resp->preflight = true;
			goto done;
		}

		/*
		 * GET (and HEAD) /: DynamoDB's health check; other paths are 404.
		 * Load balancers and scripts wait on it, so a worker that answers
		 * every operation with NOT_READY_ERROR is not healthy: 503 and what
		 * is wrong (see "A database that is not ready").
		 */
		if ((strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) && strcmp(url, "/") == 0)
		{
			const char *region = GetConfigOption("ddb.region", true, false);
			const char *problem = not_ready_problem();

			resp->content_type = "text/plain";
			if (problem != NULL)
			{
				resp->status = 503;
				appendStringInfo(&resp->body, "not ready: %s", problem);
				goto done;
			}
			resp->status = 200;
			appendStringInfo(&resp->body, "healthy: dynamodb.%s.amazonaws.com ",
							 region && region[0] ? region : "us-east-1");
			goto done;
		}

		/* DynamoDB answers anything but a JSON POST with a bare 404 */
		ctype = ddb_http_header(&view, "Content-Type");
		if (ctype)
		{
			int			l = strcspn(ctype, ";");

			while (l > 0 && ctype[l - 1] == ' ')
				l--;
			if (l == strlen("application/json") && strncmp(ctype, "application/json", l) == 0)
				resp->content_type = "application/json";
			else if (!(l == strlen("application/x-amz-json-1.0") &&
					   strncmp(ctype, "application/x-amz-json-1.0", l) == 0))
				ctype = NULL;
		}
		if (strcmp(method, "POST") != 0 || (hreq->len > 0 && ctype == NULL))
		{
			resp->status = 404;
			resp->content_type = NULL;
			appendStringInfoString(&resp->body, "<UnknownOperationException/>\n");
			goto done;
		}

		/* the body must be JSON (DynamoDB checks this before the target) */
		if (hreq->len > 0 && !body_is_json_object(hreq->body, hreq->len))
		{
			json_error(resp, 400, DDB_HTTP_CORAL "SerializationException", NULL);
			goto done;
		}

		/* X-Amz-Target: <service>.<Operation> */
		xtarget = ddb_http_header(&view, "X-Amz-Target");
		if (xtarget)
		{
			const char *dot = strchr(xtarget, '.');

			if (dot && dot - xtarget == strlen(TARGET_DYNAMODB) &&
				strncmp(xtarget, TARGET_DYNAMODB, dot - xtarget) == 0 &&
				in_list(dynamodb_operations, dot + 1))
				op = dot + 1;
			else if (dot && dot - xtarget == strlen(TARGET_STREAMS) &&
					 strncmp(xtarget, TARGET_STREAMS, dot - xtarget) == 0 &&
					 in_list(streams_operations, dot + 1))
				op = dot + 1;
		}
		if (op == NULL)
		{
			json_error(resp, 400, DDB_HTTP_CORAL "UnknownOperationException", NULL);
			goto done;
		}
		target = xtarget;

		/* connected to no database: what is wrong (see the file header) */
		if (unserved_message != NULL)
		{
			json_error(resp, 400, NOT_READY_ERROR, unserved_message);
			goto done;
		}

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		in_xact = true;
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, target);

		/*
		 * Before CREATE EXTENSION ddb in ddb.http_database: say what to
		 * run, rather than fail on the first missing object.
		 */
		if (!OidIsValid(get_extension_oid("ddb", true)))
		{
			answer_no_extension(resp);
			goto done;
		}
		if (pg_atomic_read_u32(&http_shared->logged_no_extension) != 0)
			pg_atomic_write_u32(&http_shared->logged_no_extension, 0);

		/*
		 * Between two requests nothing holds a pointer into ddb's caches:
		 * now and then let them forget tables dropped since (a worker lives
		 * as long as the server, and tables may come and go by the
		 * thousand).
		 */
		if (++requests_since_sweep >= DDB_HTTP_SWEEP_EVERY)
		{
			requests_since_sweep = 0;
			ddb_forget_dropped_tables();
		}

		/* who is asking */
		if (http_auth == DDB_HTTP_AUTH_NONE)
		{
			role = get_role_oid(http_role, true);
			if (!OidIsValid(role))
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("role \"%s\" of ddb.http_role does not exist", http_role)));
		}
		else
		{
			DdbSigV4	sig;
			char	   *secret = NULL;

			if (!ddb_sigv4_parse(&view, GetCurrentTimestamp(), &sig, &herr))
			{
				http_error(resp, &herr);
				goto done;
			}
			if (!ddb_http_key_lookup(sig.access_key_id, &secret, &role))
			{
				ddb_sigv4_unknown_key(&herr);
				http_error(resp, &herr);
				goto done;
			}
			if (!ddb_sigv4_verify(&view, &sig, secret, &herr))
			{
				http_error(resp, &herr);
				goto done;
			}
		}

		if (hreq->len == 0)
		{
			json_error(resp, 400, DDB_HTTP_CORAL "SerializationException", NULL);
			goto done;
		}
		/* (for an AccessDeniedException's message, made after the abort) */
		role_name = MemoryContextStrdup(request_cxt, GetUserNameFromId(role, false));

		/* the operation, as the key's role; abort restores the user */
		{
			Oid			save_user;
			int			save_sec;
			MemoryContext old;

			GetUserIdAndSecContext(&save_user, &save_sec);
			SetUserIdAndSecContext(role, save_sec | SECURITY_LOCAL_USERID_CHANGE);
			/* the response must outlive the transaction */
			old = MemoryContextSwitchTo(request_cxt);
			/* (see "Time limits" in the file header) */
			if (http_request_timeout > 0)
				enable_timeout_after(STATEMENT_TIMEOUT, http_request_timeout);
			ddb_request_address = ddb_http_header(&view, "Host");
			result = ddb_api_execute(op, hreq->body, (int) hreq->len, &resultlen);
			ddb_request_address = NULL;
			disable_timeout(STATEMENT_TIMEOUT, false);
			MemoryContextSwitchTo(old);
			SetUserIdAndSecContext(save_user, save_sec);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(request_cxt);	/* (the commit left TopMemoryContext) */
		in_xact = false;
		resp->status = 200;
		appendBinaryStringInfo(&resp->body, result, resultlen);

done:
		if (in_xact)
		{
			/* refused before the operation ran: nothing to keep */
			AbortCurrentTransaction();
			MemoryContextSwitchTo(request_cxt);
			in_xact = false;
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		HOLD_INTERRUPTS();
		ddb_request_address = NULL;
		disable_timeout(STATEMENT_TIMEOUT, false);
		MemoryContextSwitchTo(request_cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		QueryCancelPending = false;
		RESUME_INTERRUPTS();

		/*
		 * The abort leaves TopMemoryContext current: the error response is
		 * made in the request's context, which is reset after it is sent,
		 * or each failed request would leave its bytes in the worker for
		 * good.
		 */
		MemoryContextSwitchTo(request_cxt);
		error_response(resp, edata, target, role_name);
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * DynamoDB's request ids: 52 characters of [A-Z0-9], unique enough to find
 * a request in logs (not a secret: the fast PRNG will do).
 */
static void
request_id(char *out)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64		r = 0;

	for (int i = 0; i < 52; i++)
	{
		/* 12 base-36 digits per 64 random bits */
		if (i % 12 == 0)
			r = pg_prng_uint64(&pg_global_prng_state);
		out[i] = chars[r % 36];
		r /= 36;
	}
	out[52] = '\0';
}

/* A response's body as libmicrohttpd holds it until it is sent. */
typedef struct HeldResponse
{
	size_t		len;
	char		data[FLEXIBLE_ARRAY_MEMBER];
} HeldResponse;

/* libmicrohttpd is done with a response (sent, or its connection closed) */
static void
response_sent(void *cls)
{
	HeldResponse *held = cls;

	unsent -= held->len;
	free(held);
}

static enum MHD_Result
send_response(struct MHD_Connection *conn, HttpResponse *resp)
{
	struct MHD_Response *r;
	HeldResponse *held;
	enum MHD_Result ret;
	char		rid[53];
	char		crcbuf[16];
	pg_crc32	crc;
	const char *origin;

	/* a copy counted in 'unsent' until libmicrohttpd lets it go */
	held = malloc(offsetof(HeldResponse, data) + Max(resp->body.len, 1));
	if (held == NULL)
		return MHD_NO;
	held->len = resp->body.len;
	memcpy(held->data, resp->body.data, resp->body.len);
	r = MHD_create_response_from_buffer_with_free_callback_cls(held->len, held->data,
															   response_sent, held);
	if (r == NULL)
	{
		free(held);
		return MHD_NO;
	}
	unsent += held->len;
	request_id(rid);
	/* zlib's CRC-32 of the body, which SDKs check */
	INIT_TRADITIONAL_CRC32(crc);
	COMP_TRADITIONAL_CRC32(crc, resp->body.data, resp->body.len);
	FIN_TRADITIONAL_CRC32(crc);
	snprintf(crcbuf, sizeof(crcbuf), "%u", crc);
	MHD_add_response_header(r, "x-amzn-RequestId", rid);
	MHD_add_response_header(r, "x-amz-crc32", crcbuf);
	if (resp->content_type)
		MHD_add_response_header(r, "Content-Type", resp->content_type);
	if (resp->close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");

	/*
	 * CORS, as DynamoDB answers it (so that a browser's SDK may call): a
	 * request from a page (Origin) may come from anywhere -- it is signed --
	 * and may read the response's headers; a preflight is allowed the
	 * method and headers it asks for.  Unsigned (ddb.http_auth = 'none'),
	 * only from pages served from the loopback (see loopback_host).
	 */
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (origin != NULL && (http_auth != DDB_HTTP_AUTH_NONE || loopback_origin(origin)))
	{
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		MHD_add_response_header(r, "Access-Control-Expose-Headers",
								"x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date");
		if (resp->preflight)
		{
			const char *m = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
														"Access-Control-Request-Method");
			const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
														"Access-Control-Request-Headers");

			MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
			if (m != NULL)
				MHD_add_response_header(r, "Access-Control-Allow-Methods", m);
			if (h != NULL)
				MHD_add_response_header(r, "Access-Control-Allow-Headers", h);
		}
	}
	ret = MHD_queue_response(conn, resp->status, r);
	MHD_destroy_response(r);
	return ret;
}

/* 413, with DynamoDB's JSON error shape; libmicrohttpd closes afterwards. */
static enum MHD_Result
send_too_large(struct MHD_Connection *conn)
{
	HttpResponse resp;
	char		buf[256];

	memset(&resp, 0, sizeof(resp));
	resp.content_type = "application/x-amz-json-1.0";
	resp.status = 413;
	snprintf(buf, sizeof(buf),
			 "{\"__type\":\"" DDB_HTTP_CORAL "RequestEntityTooLargeException\","
			 "\"message\":\"Request body is larger than %d bytes\"}",
			 DDB_HTTP_MAX_BODY);
	resp.body.data = buf;
	resp.body.len = strlen(buf);
	return send_response(conn, &resp);
}

/* What ambiguous_length reads of a request's headers, in one walk. */
typedef struct LengthHeaders
{
	int			lengths;		/* Content-Length headers */
	int			encodings;		/* Transfer-Encoding headers */
	const char *encoding;		/* the (last) Transfer-Encoding value */
	bool		bad_name;		/* a field name that is not a token */
	bool		bad_value;		/* a control character in a value */
} LengthHeaders;

/* Is 'name' an HTTP token (RFC 9110 section 5.6.2)? */
static bool
is_token(const char *name)
{
	if (*name == '\0')
		return false;
	for (const char *c = name; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') &&
			!(*c >= '0' && *c <= '9') && strchr("!#$%&'*+-.^_`|~", *c) == NULL)
			return false;
	return true;
}

static enum MHD_Result
count_length_headers(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
					 const char *value, size_t value_size)
{
	LengthHeaders *h = cls;

	if (pg_strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
		h->lengths++;
	if (pg_strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
	{
		h->encodings++;
		h->encoding = value;
	}
	if (strlen(key) != key_size || !is_token(key))
		h->bad_name = true;
	for (size_t i = 0; value != NULL && i < value_size; i++)
		if (((unsigned char) value[i] < 0x20 && value[i] != '\t') || value[i] == 0x7f)
			h->bad_value = true;
	return MHD_YES;
}

/*
 * A request whose body's length its headers give in two ways: two
 * Content-Length headers, or one with Transfer-Encoding.  libmicrohttpd
 * takes the first Content-Length (or the chunked encoding) and reads what
 * follows as the next request, where a proxy in front of the endpoint may
 * have taken the other length: the bytes one reads as a body the other
 * reads as a request of its own (request smuggling).  RFC 9112 section 6.3
 * lets a server refuse both; this one does, with 400, and closes the
 * connection without reading the body.  So it refuses:
 *
 * - A Transfer-Encoding other than "chunked" alone (RFC 9112 section 6.3:
 *   when chunked is not the final coding the length cannot be determined,
 *   and the server must answer 400 and close).  libmicrohttpd decodes only
 *   a lone "chunked" and takes any other coding ("gzip", "gzip, chunked",
 *   two Transfer-Encoding headers) as a body that lasts until the
 *   connection closes, so the request was never answered -- and a proxy
 *   that decoded the chunked coding would have had every later request it
 *   sent on that connection swallowed as its body.
 * - A field name that is not a token, "Transfer-Encoding : chunked" above
 *   all (RFC 9112 section 5.1: whitespace before the colon must be answered
 *   400).  libmicrohttpd keeps the blank in the name, so it knew neither
 *   the header nor that the length was given twice, and used
 *   Content-Length, where a proxy that trims the name uses chunked.
 * - A value with a control character: a bare CR, which some proxies end a
 *   line at ("X-A: a\rTransfer-Encoding: chunked" is one header here, two
 *   there), or another (RFC 9110 section 5.5: invalid).  (A NUL
 *   libmicrohttpd cuts the value at itself.)
 */
static const char *
ambiguous_length(struct MHD_Connection *conn)
{
	LengthHeaders h = {0, 0, NULL, false, false};

	MHD_get_connection_values_n(conn, MHD_HEADER_KIND, count_length_headers, &h);
	if (h.bad_name)
		return "The request has a header field name that is not a token";
	if (h.bad_value)
		return "The request has a control character in a header field value";
	if (h.lengths > 1)
		return "The request has more than one Content-Length header";
	if (h.lengths > 0 && h.encodings > 0)
		return "The request has both Content-Length and Transfer-Encoding headers";
	if (h.encodings > 1 || (h.encoding != NULL && pg_strcasecmp(h.encoding, "chunked") != 0))
		return "The request has a Transfer-Encoding other than chunked";
	return NULL;
}

static enum MHD_Result
send_bad_length(struct MHD_Connection *conn, const char *message)
{
	HttpResponse resp;
	char		buf[256];

	memset(&resp, 0, sizeof(resp));
	resp.content_type = "application/x-amz-json-1.0";
	resp.status = 400;
	resp.close = true;
	snprintf(buf, sizeof(buf),
			 "{\"__type\":\"" DDB_HTTP_CORAL "SerializationException\",\"Message\":\"%s\"}",
			 message);
	resp.body.data = buf;
	resp.body.len = strlen(buf);
	return send_response(conn, &resp);
}

/* More bodies than this worker may hold: DynamoDB's throttling answer. */
static enum MHD_Result
send_throttled(struct MHD_Connection *conn)
{
	HttpResponse resp;
	static char buf[] = "{\"__type\":\"com.amazon.coral.availability#ThrottlingException\","
		"\"message\":\"Rate of requests exceeds the allowed throughput.\"}";

	memset(&resp, 0, sizeof(resp));
	resp.content_type = "application/x-amz-json-1.0";
	resp.status = 400;
	resp.body.data = buf;
	resp.body.len = strlen(buf);
	return send_response(conn, &resp);
}

/* Grow a body's buffer to 'cap' within the worker's bound; false if not. */
static bool
body_reserve(HttpRequest *hreq, size_t cap)
{
	char	   *b;

	if (buffered - hreq->cap + cap > DDB_HTTP_MAX_BUFFERED)
		return false;
	b = realloc(hreq->body, cap);
	if (b == NULL)
		return false;
	buffered += cap - hreq->cap;
	hreq->body = b;
	hreq->cap = cap;
	return true;
}

/*
 * libmicrohttpd's access handler, called once with the headers, then with
 * each piece of the body, then once more (*upload_data_size == 0) to
 * answer.
 */
static enum MHD_Result
access_handler(void *cls, struct MHD_Connection *conn, const char *url,
			   const char *method, const char *version, const char *upload_data,
			   size_t *upload_data_size, void **con_cls)
{
	HttpRequest *hreq = *con_cls;
	HttpResponse resp;
	enum MHD_Result ret;

	/* HTTPS: what the connection read reached us (TLS_MAX_PENDING_BYTES) */
	if (tls_cert_pem != NULL)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

		if (ci != NULL && ci->socket_context != NULL)
			((ConnClock *) ci->socket_context)->tls_pending = 0;
	}

	if (hreq == NULL)
	{
		const char *cl;
		const char *ambiguous;

		hreq = calloc(1, sizeof(HttpRequest));
		if (hreq == NULL)
			return MHD_NO;
		*con_cls = hreq;
		if ((ambiguous = ambiguous_length(conn)) != NULL)
			return send_bad_length(conn, ambiguous);
		/* refuse an oversized body before reading it */
		cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl)
		{
			char	   *end;
			unsigned long long n = strtoull(cl, &end, 10);

			/*
			 * Over DynamoDB's limit: a client that waits for "100 Continue"
			 * is answered at once and sends nothing; one that is sending
			 * its body would see its connection reset if we closed with
			 * the body unread, so the body is read and dropped (up to
			 * DDB_HTTP_MAX_DISCARD) and 413 answered after it.
			 */
			if (n > DDB_HTTP_MAX_BODY)
			{
				if (n > DDB_HTTP_MAX_DISCARD ||
					MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
												MHD_HTTP_HEADER_EXPECT) != NULL)
					return send_too_large(conn);
				hreq->too_large = true;
				return MHD_YES;
			}
			hreq->declared = n;
		}
		/* a worker that holds its bound of bodies already takes no more */
		if (buffered >= DDB_HTTP_MAX_BUFFERED)
			return send_throttled(conn);
		return MHD_YES;
	}

	if (*upload_data_size > 0)
	{
		size_t		n = *upload_data_size;

		*upload_data_size = 0;
		if (hreq->too_large)
			return MHD_YES;		/* dropped: see above */
		if (hreq->len + n > DDB_HTTP_MAX_BODY)
		{
			/* a chunked body past the limit: drop the connection */
			return MHD_NO;
		}
		if (hreq->len + n > hreq->cap)
		{
			/* grown as the body comes, to at most its declared length */
			size_t		cap = Max(hreq->cap * 2, Max(hreq->len + n, 4096));

			if (hreq->declared >= hreq->len + n)
				cap = Min(cap, hreq->declared);
			if (!body_reserve(hreq, Min(cap, DDB_HTTP_MAX_BODY)))
				return MHD_NO;
		}
		memcpy(hreq->body + hreq->len, upload_data, n);
		hreq->len += n;
		return MHD_YES;
	}

	/* the whole request is here */
	if (hreq->too_large)
		return send_too_large(conn);
	/* clients that do not read their responses: see "Responses" above */
	if (unsent >= DDB_HTTP_MAX_UNSENT)
		return send_throttled(conn);
	memset(&resp, 0, sizeof(resp));
	resp.status = 500;
	resp.content_type = "application/x-amz-json-1.0";
	{
		MemoryContext old = MemoryContextSwitchTo(request_cxt);
		TimestampTz start = GetCurrentTimestamp();
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

		/* this connection's clock stops until its response is sent */
		if (ci != NULL && ci->socket_context != NULL)
			((ConnClock *) ci->socket_context)->since = DT_NOEND;
		initStringInfo(&resp.body);
		pg_atomic_write_u32(&worker_load[my_worker].busy, 1);
		serve(conn, url, method, hreq, &resp);
		pg_atomic_write_u32(&worker_load[my_worker].busy, 0);
		MemoryContextSwitchTo(old);
		clocks_pause(GetCurrentTimestamp() - start);
	}
	ret = send_response(conn, &resp);
	MemoryContextReset(request_cxt);
	return ret;
}

static void
request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
				  enum MHD_RequestTerminationCode toe)
{
	HttpRequest *hreq = *con_cls;

	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	/* the connection's next request is due within the idle timeout */
	if (ci != NULL && ci->socket_context != NULL)
		((ConnClock *) ci->socket_context)->since = GetCurrentTimestamp();
	if (hreq)
	{
		buffered -= hreq->cap;
		free(hreq->body);
		free(hreq);
		*con_cls = NULL;
	}
}

/*
 * GnuTLS's reads of an HTTPS connection's socket (its default's recv, with
 * the count of TLS_MAX_PENDING_BYTES): past the limit the read fails as a
 * reset connection's would, GnuTLS fails the handshake or the record, and
 * libmicrohttpd closes the connection.
 */
static ssize_t
tls_pull(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
	ConnClock  *clk = (ConnClock *) ptr;
	ssize_t		n;

	if (clk->tls_pending >= TLS_MAX_PENDING_BYTES)
	{
		errno = ECONNRESET;
		return -1;
	}
	n = recv(clk->fd, buf, len, 0);
	if (n > 0)
		clk->tls_pending += n;
	return n;
}

/*
 * GnuTLS has taken in the client's Finished (the last message a client
 * sends in a handshake; GnuTLS checks it next): the count starts again.
 */
static int
tls_finished_hook(gnutls_session_t session, unsigned int htype, unsigned when,
				  unsigned int incoming, const gnutls_datum_t *msg)
{
	if (incoming)
		((ConnClock *) gnutls_transport_get_ptr(session))->tls_pending = 0;
	return 0;
}

/* The reads of an HTTPS connection that has no clock: uncounted, so none. */
static ssize_t
tls_pull_refused(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
	errno = ECONNRESET;
	return -1;
}

/*
 * tls_pull's wait for data, as GnuTLS's default waits on the socket (for a
 * timed read, which nothing here asks for: set so that one would work).
 */
static int
tls_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
	ConnClock  *clk = (ConnClock *) ptr;

	return gnutls_system_recv_timeout((gnutls_transport_ptr_t) (intptr_t) clk->fd, ms);
}

/*
 * Tells fd.c about each connection's socket, so it keeps within its limit,
 * and has an HTTPS connection's socket read by tls_pull: libmicrohttpd
 * has made its GnuTLS session, with the socket for both directions, before
 * it calls this, and the handshake starts at the first read.  An HTTPS
 * connection whose clock cannot be allocated fails its first read.
 */
static void
connection_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
				  enum MHD_ConnectionNotificationCode toe)
{
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *tls =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		ConnClock  *clk = malloc(sizeof(ConnClock));

		ReserveExternalFD();
		pg_atomic_fetch_add_u32(&worker_load[my_worker].conns, 1);
		if (clk != NULL && ci != NULL)
		{
			clk->fd = ci->connect_fd;
			clk->since = GetCurrentTimestamp();
			clk->tls_pending = 0;
			if (tls != NULL && tls->tls_session != NULL)
			{
				gnutls_session_t session = (gnutls_session_t) tls->tls_session;

				gnutls_transport_set_ptr2(session, clk,
										  (gnutls_transport_ptr_t) (intptr_t) clk->fd);
				gnutls_transport_set_pull_function(session, tls_pull);
				gnutls_transport_set_pull_timeout_function(session, tls_pull_timeout);
				gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_FINISHED,
												   GNUTLS_HOOK_POST, tls_finished_hook);
			}
			dlist_push_tail(&conn_clocks, &clk->node);
			*socket_context = clk;
		}
		else
		{
			free(clk);
			if (tls != NULL && tls->tls_session != NULL)
				gnutls_transport_set_pull_function((gnutls_session_t) tls->tls_session,
												   tls_pull_refused);
		}
	}
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
	{
		ConnClock  *clk = *socket_context;

		ReleaseExternalFD();
		pg_atomic_fetch_sub_u32(&worker_load[my_worker].conns, 1);
		if (clk != NULL)
		{
			dlist_delete(&clk->node);
			free(clk);
			*socket_context = NULL;
		}
	}
}

/*
 * Move the running clocks on by 'elapsed', the time the worker spent
 * serving a request, during which their data could not be read (see
 * "Deadlines").
 */
static void
clocks_pause(TimestampTz elapsed)
{
	dlist_iter	it;

	dlist_foreach(it, &conn_clocks)
	{
		ConnClock  *clk = dlist_container(ConnClock, node, it.cur);

		if (clk->since != DT_NOEND)
			clk->since += elapsed;
	}
}

/* The worker's lock_timeout is ddb.http_lock_timeout (see "Time limits"). */
static void
apply_lock_timeout(void)
{
	char		val[32];

	snprintf(val, sizeof(val), "%d", http_lock_timeout);
	SetConfigOption("lock_timeout", val, PGC_SUSET, PGC_S_OVERRIDE);
}

/* Shut down the connections past their deadline (see "Deadlines"). */
static void
enforce_deadlines(void)
{
	TimestampTz now = GetCurrentTimestamp();
	dlist_iter	it;

	dlist_foreach(it, &conn_clocks)
	{
		ConnClock  *clk = dlist_container(ConnClock, node, it.cur);

		if (now - clk->since > (TimestampTz) http_idle_timeout * USECS_PER_SEC)
		{
			shutdown(clk->fd, SHUT_RDWR);
			clk->since = DT_NOEND;	/* once; libmicrohttpd closes it next */
		}
	}
}

/* Should this worker take the next connection? (see the file header) */
static bool
may_accept(void)
{
	uint32		mine = pg_atomic_read_u32(&worker_load[my_worker].conns);

	if (mine >= DDB_HTTP_MAX_CONNS)
		return false;
	for (int i = 0; i < http_workers; i++)
		if (i != my_worker && pg_atomic_read_u32(&worker_load[i].conns) < mine &&
			pg_atomic_read_u32(&worker_load[i].busy) == 0)
			return false;
	return true;
}

/*
 * May this worker take a connection it has let pass ACCEPT_MAX_PAUSES
 * times?  Not at the connection limit while another worker has room
 * (see the file header).  A worker that is not running counts as full.
 */
static bool
may_take_anyway(void)
{
	if (pg_atomic_read_u32(&worker_load[my_worker].conns) < DDB_HTTP_MAX_CONNS)
		return true;
	for (int i = 0; i < http_workers; i++)
		if (pg_atomic_read_u32(&worker_load[i].conns) < DDB_HTTP_MAX_CONNS)
			return false;
	return true;
}

/*
 * Accepts one connection from a listening socket and gives it to
 * libmicrohttpd.  Another worker may have taken it first (EAGAIN).
 */
static void
accept_one(struct MHD_Daemon *daemon, int sock)
{
	struct sockaddr_storage addr;
	socklen_t	len = sizeof(addr);
	int			fd = accept4(sock, (struct sockaddr *) &addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
	{
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			errno != ECONNABORTED)
			ereport(LOG,
					(errcode_for_socket_access(),
					 errmsg("ddb http worker could not accept a connection: %m")));
		return;
	}
	/* libmicrohttpd owns the socket from here on, and closes it on failure */
	(void) MHD_add_connection(daemon, fd, (struct sockaddr *) &addr, len);
}

static void
mark_not_running(int code, Datum arg)
{
	pg_atomic_write_u32(&worker_load[my_worker].conns, NOT_RUNNING);
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char		buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* runs inside libmicrohttpd: never let an error escape */
	PG_TRY();
	{
		elog(DEBUG1, "libmicrohttpd: %s", buf);
	}
	PG_CATCH();
	{
		FlushErrorState();
	}
	PG_END_TRY();
}

/* ddb.http_database's state, read in pg_database (a shared catalog) */
static DbState
database_state(void)
{
	Oid			dboid;
	HeapTuple	tup = NULL;
	DbState		state = DB_MISSING;

	StartTransactionCommand();
	dboid = get_database_oid(http_database, true);
	if (OidIsValid(dboid))
		tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (HeapTupleIsValid(tup))
	{
		state = ((Form_pg_database) GETSTRUCT(tup))->datallowconn ? DB_READY : DB_NO_CONNECTIONS;
		ReleaseSysCache(tup);
	}
	CommitTransactionCommand();
	return state;
}

/*
 * Sets unserved_message, the answer to every request, for 'state'; the
 * log says it once (see "A database that is not ready").
 */
static void
set_unserved(DbState state)
{
	const char *problem;
	char	   *advice;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	if (state == DB_MISSING)
	{
		problem = "does not exist";
		advice = "create it and run CREATE EXTENSION ddb in it, or set ddb.http_database "
			"to the database that has the extension and restart the server";
	}
	else
	{
		problem = "does not allow connections";
		advice = psprintf("set ddb.http_database to the database that has the extension and "
						  "restart the server, or run ALTER DATABASE %s ALLOW_CONNECTIONS true",
						  quote_identifier(http_database));
	}
	if (unserved_message != NULL)
		pfree(unserved_message);
	unserved_message = psprintf("database \"%s\" (ddb.http_database) %s: %s",
								http_database, problem, advice);
	unserved_state = state;
	MemoryContextSwitchTo(old);

	if (pg_atomic_exchange_u32(&http_shared->logged_database, state) != state)
		ereport(WARNING,
				(errcode(state == DB_MISSING ? ERRCODE_UNDEFINED_DATABASE :
						 ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("database \"%s\" of ddb.http_database %s", http_database, problem),
				 errdetail("ddb's HTTP endpoint answers every operation with AccessDeniedException "
						   "until its workers can connect to it."),
				 errhint("%c%s.", pg_toupper((unsigned char) advice[0]), advice + 1)));
}

/* Exit, to be restarted connected to ddb.http_database. */
static void
reconnect(void)
{
	pg_atomic_write_u32(&worker_load[my_worker].connecting, 0);
	proc_exit(1);				/* 1: restarted after bgw_restart_time */
}

/*
 * Connects to ddb.http_database; or, when this worker's last start failed
 * while connecting to it, to no database, to say what is wrong (see "A
 * database that is not ready").
 */
static void
connect_to_database(void)
{
	DbState		state;

	if (pg_atomic_read_u32(&worker_load[my_worker].connecting) == 0)
	{
		pg_atomic_write_u32(&worker_load[my_worker].connecting, 1);
		BackgroundWorkerInitializeConnection(http_database, NULL, 0);
		pg_atomic_write_u32(&worker_load[my_worker].connecting, 0);
		return;
	}
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	state = database_state();
	if (state == DB_READY)
		reconnect();			/* that failure has passed: try again */
	set_unserved(state);
}

void
ddb_http_worker_main(Datum arg)
{
	struct MHD_Daemon *daemon;
	const union MHD_DaemonInfo *info;
	WaitEventSet *wes;			/* with the listening sockets */
	WaitEventSet *wes_paused;	/* without them */
	WaitEvent	events[DDB_HTTP_MAX_SOCKETS + 3];
	int			first_sock_pos = -1;
	bool		polling_socks = true;
	TimestampTz resume_at = 0;
	TimestampTz next_db_check = 0;
	int			pauses = 0;
	struct MHD_OptionItem tls_options[4];

	my_worker = DatumGetInt32(arg);
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	ddb_settings_server_only = true;	/* (see ddb_table.c) */
	connect_to_database();

	request_cxt = AllocSetContextCreate(TopMemoryContext, "ddb http request",
										ALLOCSET_DEFAULT_SIZES);
	apply_lock_timeout();

	/*
	 * The SQL ddb runs for a request, as the key's role, names its relations
	 * with their schema and needs nothing of search_path; with the default
	 * ("$user", public), an operator another role created in public with
	 * argument types that match exactly (see ddb_run_as_begin) would run as
	 * the key's role.  Tables are found by ddb.schema, not search_path.
	 */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

	/* HTTPS when the postmaster loaded ddb.http_ssl_* (load_tls_files) */
	tls_options[0] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};
	if (tls_cert_pem != NULL)
	{
		tls_options[0] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_KEY, 0, tls_key_pem};
		tls_options[1] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_CERT, 0, tls_cert_pem};
		tls_options[2] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_PRIORITIES, 0, TLS_PRIORITIES};
		tls_options[3] = (struct MHD_OptionItem) {MHD_OPTION_END, 0, NULL};
	}
	daemon = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL |
							  MHD_USE_ERROR_LOG | MHD_USE_TURBO |
							  (tls_cert_pem != NULL ? MHD_USE_TLS : 0),
							  0, NULL, NULL, access_handler, NULL,
							  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
							  MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL,
							  MHD_OPTION_NOTIFY_CONNECTION, connection_notify, NULL,
							  MHD_OPTION_CONNECTION_LIMIT, (unsigned int) DDB_HTTP_MAX_CONNS,
							  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) http_idle_timeout,
							  MHD_OPTION_ARRAY, tls_options,
							  MHD_OPTION_END);
	if (daemon == NULL)
		ereport(FATAL,
				(errmsg("could not start the HTTP server of ddb http worker %d", my_worker + 1)));
	pg_atomic_write_u32(&worker_load[my_worker].conns, 0);
	on_shmem_exit(mark_not_running, 0);

	info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
	wes_paused = CreateWaitEventSet(TopMemoryContext, 3);
	wes = CreateWaitEventSet(TopMemoryContext, n_listen_socks + 3);
	for (int k = 0; k < 2; k++)
	{
		WaitEventSet *w = k == 0 ? wes : wes_paused;

		AddWaitEventToSet(w, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(w, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		AddWaitEventToSet(w, WL_SOCKET_READABLE, info->epoll_fd, NULL, NULL);
	}
	for (int i = 0; i < n_listen_socks; i++)
	{
		int			pos = AddWaitEventToSet(wes, WL_SOCKET_READABLE, listen_socks[i],
											NULL, (void *) (intptr_t) listen_socks[i]);

		if (i == 0)
			first_sock_pos = pos;
	}

	pgstat_report_activity(STATE_IDLE, NULL);

	for (;;)
	{
		long		timeout = -1;
		long		stats_timeout;
		MHD_UNSIGNED_LONG_LONG t;
		int			nevents;
		bool		deferred = false;

		if (MHD_get_timeout(daemon, &t) == MHD_YES)
			timeout = (long) Min(t, (MHD_UNSIGNED_LONG_LONG) INT_MAX);
		/* pending table statistics get flushed within ~10 s of idling */
		stats_timeout = pgstat_report_stat(false);
		if (stats_timeout > 0 && (timeout < 0 || stats_timeout < timeout))
			timeout = stats_timeout;
		if (!polling_socks && (timeout < 0 || timeout > ACCEPT_PAUSE_MS))
			timeout = ACCEPT_PAUSE_MS;
		/* connections' deadlines are looked at about once a second */
		if (!dlist_is_empty(&conn_clocks) && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		if (unserved_message != NULL && (timeout < 0 || timeout > DB_CHECK_MS))
			timeout = DB_CHECK_MS;

		nevents = WaitEventSetWait(polling_socks ? wes : wes_paused, timeout, events,
								   lengthof(events), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);

		if (ProcDiePending)
		{
			/* a clean stop: close this worker's connections */
			MHD_stop_daemon(daemon);
			pgstat_report_stat(true);
			proc_exit(1);		/* 1: restarted unless the server is stopping */
		}

		/*
		 * A cancel that arrives between requests (pg_cancel_backend of the
		 * request pg_stat_activity showed a moment ago) has nothing to
		 * cancel, as for an idle session: ProcessInterrupts would raise it
		 * here, outside any request, and end the worker with all its
		 * connections.  A cancel during a request fails that request.
		 */
		QueryCancelPending = false;
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			apply_lock_timeout();
		}

		/* connected to no database: can ddb.http_database serve now? */
		if (unserved_message != NULL && GetCurrentTimestamp() >= next_db_check)
		{
			DbState		state = database_state();

			if (state == DB_READY)
			{
				if (pg_atomic_exchange_u32(&http_shared->logged_database, DB_READY) != DB_READY)
					ereport(LOG,
							(errmsg("database \"%s\" of ddb.http_database takes connections now: ddb's HTTP endpoint connects to it",
									http_database)));
				MHD_stop_daemon(daemon);
				reconnect();
			}
			if (state != unserved_state)
				set_unserved(state);
			next_db_check = GetCurrentTimestamp() + DB_CHECK_MS * 1000;
		}

		/* new connections: take one, unless a less loaded worker should */
		for (int i = 0; i < nevents; i++)
		{
			if (!polling_socks || first_sock_pos < 0 || events[i].pos < first_sock_pos)
				continue;
			if (may_accept() || (pauses >= ACCEPT_MAX_PAUSES && may_take_anyway()))
			{
				accept_one(daemon, (int) (intptr_t) events[i].user_data);
				pauses = 0;
			}
			else
				deferred = true;
		}
		if (deferred && polling_socks)
		{
			polling_socks = false;
			resume_at = GetCurrentTimestamp() + ACCEPT_PAUSE_MS * 1000;
			pauses++;
		}
		else if (!polling_socks && GetCurrentTimestamp() >= resume_at)
			polling_socks = true;
		else if (polling_socks && !deferred)
			pauses = 0;

		MHD_run(daemon);
		enforce_deadlines();
	}
}
