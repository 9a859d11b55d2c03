/*
 * test/bench/null_http.c: the floor of the endpoint benchmark.
 *
 * An HTTP/1.1 server that does no work: libmicrohttpd (the library the
 * endpoint uses), epoll, keep-alive, one polling thread per connection the
 * benchmark opens, reading each request body and answering 200 with a
 * fixed GetItem response of the benchmark's item size.  What wrk measures
 * against it is the cost of a request's round trip through the kernel and
 * the HTTP library on this machine, which no server can go below.
 *
 *   null_http PORT THREADS
 */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] =
"{\"Item\":{\"PK\":{\"S\":\"CUST#42\"},\"SK\":{\"S\":\"ORDER#2025-06-15#0042\"},"
"\"status\":{\"S\":\"PAID\"},\"total\":{\"N\":\"42.42\"},"
"\"note\":{\"S\":\"0000000000000000000000000000002a0000000000000000000000000000002a00000000000000000000000000\"}}}";

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url,
	   const char *method, const char *version, const char *upload,
	   size_t *upload_size, void **state)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (*state == NULL)
	{
		*state = conn;			/* headers seen; the body follows */
		return MHD_YES;
	}
	if (*upload_size > 0)
	{
		*upload_size = 0;		/* body read and dropped */
		return MHD_YES;
	}
	resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *) body,
										   MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, "Content-Type", "application/x-amz-json-1.0");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

int
main(int argc, char **argv)
{
	struct MHD_Daemon *d;

	if (argc != 3)
		return 2;
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
						 (uint16_t) atoi(argv[1]), NULL, NULL, &answer, NULL,
						 MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) atoi(argv[2]),
						 MHD_OPTION_END);
	if (d == NULL)
		return 1;
	pause();
	return 0;
}
