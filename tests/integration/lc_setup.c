/* lc_setup.c: leaf-client's setup and teardown: rpc_dist.json and its inbound methods, the
 * corpus, reqgen, the zstd codec, the event base, the TLS context, the server's address,
 * a new connection to it, and everything freed at the end. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent_ssl.h>

#include "frontload.pb-c.h"
#include "leaf_client.h"
#include "paths.h"
#include "tls.h"

/* The server's address: --host and --port, or the port --port-file holds. */
static void lc_resolve(struct lc_client *cl)
{
	if (cl->o.port_file) {
		FILE *f = fopen(cl->o.port_file, "r");
		if (!f)
			lc_die("cannot open port file %s: %s", cl->o.port_file, strerror(errno));
		char buf[256] = "";
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *p = strrchr(buf, ':');
		p = p ? p + 1 : buf;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > 65535)
			lc_die("port file %s holds no port: '%s'", cl->o.port_file, buf);
		cl->o.port = (unsigned)v;
	}
	if (cl->o.port == 0 || cl->o.port > 65535)
		lc_die("need --port or --port-file");
	char ps[16];
	snprintf(ps, sizeof ps, "%u", cl->o.port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int rc = getaddrinfo(cl->o.host, ps, &hints, &res);
	if (rc != 0)
		lc_die("cannot resolve %s: %s", cl->o.host, gai_strerror(rc));
	memcpy(&cl->addr, res->ai_addr, res->ai_addrlen);
	cl->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
}

static void lc_load_tables(struct lc_client *cl)
{
	char path[4096], err[512];
	if (fl_data_path("rpc_dist.json", path, sizeof path, err, sizeof err) ||
		fl_rpc_dist_load(path, &cl->dist, err, sizeof err))
		lc_die("%s", err);
	/* InboundMethod of each rpc_dist.json inbound name: compare letters only, so
	 * "createAndPrimeSession" meets CREATE_AND_PRIME_SESSION. */
	const ProtobufCEnumDescriptor *ed = &frontload__inbound_method__descriptor;
	for (size_t k = 0; k < FL_RPC_INBOUND; k++) {
		int found = 0;
		for (unsigned e = 0; e < ed->n_values && !found; e++) {
			const char *a = cl->dist.in[k].name, *b = ed->values[e].name;
			for (;;) {
				while (*b == '_')
					b++;
				if (!*a || !*b || tolower((unsigned char)*a) != tolower((unsigned char)*b))
					break;
				a++;
				b++;
			}
			if (!*a && !*b) {
				cl->in_enum[k] = (unsigned)ed->values[e].value;
				found = 1;
			}
		}
		if (!found)
			lc_die("inbound method %s of rpc_dist.json is not in frontload.proto",
				cl->dist.in[k].name);
	}
}

/* LeafRequests come from reqgen with the client's options: same seed, same stream. */
static void lc_setup_reqgen(struct lc_client *cl)
{
	const struct lc_opts *o = &cl->o;
	struct fl_reqgen_config c;
	char err[512];
	fl_reqgen_config_default(&c);
	c.seed = o->seed;
	c.stories = o->stories;
	c.story_bytes = o->story_bytes;
	/* A target of 0 reads as "sampled" to reqgen; 1 builds the same request (no padding
	 * fits either way), and so does a cap of 1 for a cap of 0. */
	c.fixed_bytes = o->size_sampled ? FL_REQGEN_SIZE_SAMPLED :
		o->request_bytes ? o->request_bytes : 1;
	c.max_request_bytes = o->max_request_bytes ? o->max_request_bytes : 1;
	cl->bad_method = !o->method_mix && o->method >= FL_RPC_INBOUND;
	c.method = o->method_mix ? FL_REQGEN_MIX : cl->bad_method ? 0 : (int)o->method;
	c.sessions = LC_SESSIONS;
	c.want_zstd = o->zstd;
	c.reply_bytes = o->reply_bytes;
	if (fl_reqgen_init(&cl->gen, &c, &cl->corpus, err, sizeof err) != 0)
		lc_die("%s", err);
}

void lc_setup(struct lc_client *cl)
{
	char err[512];
	lc_load_tables(cl);
	if (cl->o.corpus_dir) {
		if (fl_corpus_load_dir(&cl->corpus, cl->o.corpus_dir, err, sizeof err))
			lc_die("%s", err);
	} else if (fl_corpus_generate(&cl->corpus, cl->o.corpus_seed, cl->o.corpus_mb << 20,
		err, sizeof err)) {
		lc_die("%s", err);
	}
	if (!cl->o.rpc)
		lc_setup_reqgen(cl);  /* --garbage builds its frame from a real request */
	cl->z = fl_zcodec_new(3);
	if (!cl->z)
		lc_die("cannot create a zstd codec");
	cl->base = event_base_new();
	if (!cl->base)
		lc_die("cannot create an event base");
	if (cl->o.tls) {
		char dir[4096];
		const char *d = cl->o.tls_dir;
		if (!d) {
			if (fl_tls_default_dir(dir, sizeof dir, err, sizeof err))
				lc_die("%s", err);
			d = dir;
		}
		cl->ssl_ctx = fl_tls_client_ctx(d, err, sizeof err);
		if (!cl->ssl_ctx)
			lc_die("%s", err);
	}
	lc_resolve(cl);
}

/* A new bufferevent connecting to the server (TLS when asked). */
struct bufferevent *lc_connect(struct lc_client *cl)
{
	struct bufferevent *bev;
	if (cl->o.tls) {
		SSL *ssl = SSL_new(cl->ssl_ctx);
		if (!ssl)
			lc_die("SSL_new failed");
		bev = bufferevent_openssl_socket_new(cl->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
			BEV_OPT_CLOSE_ON_FREE);
	} else {
		bev = bufferevent_socket_new(cl->base, -1, BEV_OPT_CLOSE_ON_FREE);
	}
	if (!bev)
		lc_die("cannot create a bufferevent");
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&cl->addr, (int)cl->addr_len) < 0) {
		bufferevent_free(bev);
		return NULL;
	}
	return bev;
}

void lc_free(struct lc_client *cl)
{
	for (uint64_t i = 0; cl->slots && i < cl->o.requests; i++)
		free(cl->slots[i].story_ids);  /* requests never answered */
	free(cl->slots);
	free(cl->lat_ns);
	free(cl->conns);
	fl_bytes_free(&cl->pack);
	fl_bytes_free(&cl->comp);
	fl_bytes_free(&cl->scratch);
	if (cl->z)
		fl_zcodec_free(cl->z);
	if (cl->ssl_ctx)
		SSL_CTX_free(cl->ssl_ctx);
	if (cl->base)
		event_base_free(cl->base);
	fl_corpus_free(&cl->corpus);
}
