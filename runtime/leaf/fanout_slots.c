/* fanout_slots.c: a FANOUT thread's in-flight call slots (fanout_slots.h). */
#include "fanout_slots.h"

#include <stddef.h>
#include <stdlib.h>

#define FSLOT_FIRST_CAP 64u
#define FSLOT_GEN_MASK 0x7fffffffu  /* 31 bits: an id never sets bit 63 */

void fl_fslots_init(struct fl_fslots *p, fl_fslot_init_fn init, void *arg)
{
	*p = (struct fl_fslots){ .init = init, .arg = arg };
}

void fl_fslots_free(struct fl_fslots *p, fl_fslot_fini_fn fini, void *arg)
{
	for (uint32_t i = 0; i < p->n; i++) {
		if (fini)
			fini(p->v[i], arg);
		free(p->v[i]);
	}
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
	p->free = NULL;
}

/* A new slot at index p->n, given to the init hook; NULL when out of memory or refused. */
static struct fl_fslot *fslot_new(struct fl_fslots *p)
{
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : FSLOT_FIRST_CAP;
		struct fl_fslot **a = realloc(p->v, cap * sizeof *a);
		if (!a)
			return NULL;
		p->v = a;
		p->cap = cap;
	}
	struct fl_fslot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->index = p->n;
	if (p->init && p->init(s, p->arg) != 0) {
		free(s);
		return NULL;
	}
	p->v[p->n++] = s;
	return s;
}

struct fl_fslot *fl_fslot_get(struct fl_fslots *p)
{
	struct fl_fslot *s = p->free;
	if (s)
		p->free = s->next;
	else if (!(s = fslot_new(p)))
		return NULL;
	p->gen = (p->gen + 1) & FSLOT_GEN_MASK;
	if (p->gen == 0)
		p->gen = 1;
	s->id = ((uint64_t)p->gen << 32) | s->index;
	s->next = s->prev = NULL;
	return s;
}

void fl_fslot_put(struct fl_fslots *p, struct fl_fslot *s)
{
	s->id = 0;
	s->req = NULL;
	s->call = NULL;
	s->list = NULL;
	s->prev = NULL;
	s->next = p->free;
	p->free = s;
}

void fl_fslot_link(struct fl_fslot_list *l, struct fl_fslot *s)
{
	s->list = l;
	s->prev = NULL;
	s->next = l->head;
	if (l->head)
		l->head->prev = s;
	l->head = s;
	l->n++;
}

struct fl_fslot *fl_fslot_find(const struct fl_fslots *p, const struct fl_fslot_list *l,
	uint64_t id)
{
	uint32_t i = (uint32_t)id;
	if (id == 0 || (id >> 63) || i >= p->n)
		return NULL;
	struct fl_fslot *s = p->v[i];
	return s->id == id && s->list == l ? s : NULL;
}

void fl_fslot_detach(struct fl_fslots *p, struct fl_fslot *s)
{
	struct fl_fslot_list *l = s->list;
	if (s->prev)
		s->prev->next = s->next;
	else
		l->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	l->n--;
	fl_fslot_put(p, s);
}
