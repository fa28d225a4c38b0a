/* test_net.c: tests for runtime/common/net.c (resolution, ports, the plain-bind probe).
 *
 * Loopback only; the busy port is one this test binds itself. Build: ninja tests/test_net.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "net.h"

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* 1. Numeric IPv4 and IPv6 hosts resolve with the port set, and set_port rewrites it. */
static void test_resolve(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char err[256] = "";

	assert_int_equal(fl_net_resolve("127.0.0.1", 8443, 0, &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(port_of(&ss), 8443);
	assert_int_equal(((struct sockaddr_in *)&ss)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	fl_net_set_port(&ss, 9);
	assert_int_equal(port_of(&ss), 9);
	if (fl_net_resolve("::1", 7, 1, &ss, &len, err, sizeof(err)) == 0) {
		assert_int_equal(ss.ss_family, AF_INET6);
		assert_int_equal(port_of(&ss), 7);
		fl_net_set_port(&ss, 65535);
		assert_int_equal(port_of(&ss), 65535);
	}
}

/* 2. An unresolvable name fails with getaddrinfo's reason and no address. */
static void test_resolve_fails(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char err[256] = "";

	assert_int_equal(fl_net_resolve("no such host.invalid", 1, 0, &ss, &len, err,
		sizeof(err)), -1);
	assert_true(err[0] != '\0');
	assert_int_equal(len, 0);
}

/* 3. The probe finds a free port free and a listening one busy (EADDRINUSE from bind). */
static void test_probe(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len;
	const char *what = NULL;
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(fl_net_resolve("127.0.0.1", 0, 1, &ss, &len, NULL, 0), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	assert_int_equal(fl_net_probe_bind(&ss, len, &what), EADDRINUSE);
	assert_string_equal(what, "bind");
	close(fd);
	assert_int_equal(fl_net_probe_bind(&ss, len, &what), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_fails),
		cmocka_unit_test(test_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
