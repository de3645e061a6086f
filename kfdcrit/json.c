// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: a small, strict JSON reader, for kfdcrit encode
 *
 * Reads one JSON text (RFC 8259) into a tree of nodes that point into the
 * text. Strings keep their escaped form and numbers their token until the
 * caller converts them, so that a value out of its field's range is told
 * apart from a malformed text, and each node knows its line and column for
 * the caller's messages. What RFC 8259 leaves to the reader is refused:
 * a key twice in one object, nesting deeper than %KC_JSON_MAX_DEPTH,
 * anything after the value. The nesting bound also bounds the recursion.
 *
 * Syntax errors are -EBADMSG, a repeated key -EINVAL; doc->msg, doc->line
 * and doc->col say what and where.
 */

#include <linux/array_size.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kfdcrit.h"

/* decode's output nests four deep; room for hand-written documents */
#define KC_JSON_MAX_DEPTH	32
#define KC_JSON_BLOCK		256

/**
 * struct kc_json_block - nodes are allocated in blocks, never moved
 * @next: the block allocated before
 * @used: nodes used in @nodes
 * @nodes: the nodes
 */
struct kc_json_block {
	struct kc_json_block *next;
	u32 used;
	struct kc_json nodes[KC_JSON_BLOCK];
};

/**
 * struct kc_json_parser - position in the text
 * @doc: the document being built
 * @p: next character
 * @end: end of the text
 * @line: line of @p, from 1
 * @line_start: first character of that line
 */
struct kc_json_parser {
	struct kc_json_doc *doc;
	const char *p;
	const char *end;
	u32 line;
	const char *line_start;
};

static int kc_json_value(struct kc_json_parser *ps, u32 depth,
			 struct kc_json **out);

static __attribute__((format(printf, 3, 4)))
int kc_json_fail(struct kc_json_parser *ps, int err, const char *fmt, ...)
{
	struct kc_json_doc *doc = ps->doc;
	va_list ap;

	doc->err = err;
	doc->line = ps->line;
	doc->col = ps->p - ps->line_start + 1;
	va_start(ap, fmt);
	vsnprintf(doc->msg, sizeof(doc->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* What is at @p, for a message: a character, or the end; @buf has 12 bytes */
static const char *kc_json_here(const struct kc_json_parser *ps, char *buf)
{
	unsigned char c;

	if (ps->p == ps->end)
		return "the end of the text";
	c = *ps->p;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 12, "'%c'", c);
	else
		snprintf(buf, 12, "byte %#x", c);
	return buf;
}

static int kc_json_unexpected(struct kc_json_parser *ps, const char *want)
{
	char buf[12];

	return kc_json_fail(ps, -EBADMSG, "%s where %s was expected",
			    kc_json_here(ps, buf), want);
}

static void kc_json_skip_ws(struct kc_json_parser *ps)
{
	for (; ps->p < ps->end; ps->p++) {
		if (*ps->p == '\n') {
			ps->line++;
			ps->line_start = ps->p + 1;
		} else if (*ps->p != ' ' && *ps->p != '\t' && *ps->p != '\r') {
			break;
		}
	}
}

static struct kc_json *kc_json_new(struct kc_json_parser *ps,
				   enum kc_json_kind kind)
{
	struct kc_json_doc *doc = ps->doc;
	struct kc_json_block *b = doc->blocks;
	struct kc_json *n;

	if (!b || b->used == KC_JSON_BLOCK) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			kc_json_fail(ps, -ENOMEM, "out of memory");
			return NULL;
		}
		b->next = doc->blocks;
		doc->blocks = b;
	}
	n = &b->nodes[b->used++];
	n->kind = kind;
	n->line = ps->line;
	n->col = ps->p - ps->line_start + 1;
	return n;
}

static bool kc_json_is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* One escape after its backslash; @ps->p is at the character after it */
static int kc_json_escape(struct kc_json_parser *ps)
{
	int i;

	if (ps->p == ps->end)
		return kc_json_unexpected(ps, "an escape");
	if (strchr("\"\\/bfnrt", *ps->p) && *ps->p) {
		ps->p++;
		return 0;
	}
	if (*ps->p != 'u')
		return kc_json_fail(ps, -EBADMSG, "unknown escape \\%c", *ps->p);
	ps->p++;
	for (i = 0; i < 4; i++, ps->p++)
		if (ps->p == ps->end || !kc_json_is_hex(*ps->p))
			return kc_json_unexpected(ps, "four hex digits after \\u");
	return 0;
}

/* A string; @ps->p is at its opening quote. Sets @n's text to its inside. */
static int kc_json_string(struct kc_json_parser *ps, struct kc_json *n)
{
	int ret;

	n->text = ++ps->p;
	while (ps->p < ps->end && *ps->p != '"') {
		if ((unsigned char)*ps->p < 0x20)
			return kc_json_unexpected(ps, "a string character (control characters must be escaped)");
		if (*ps->p++ != '\\')
			continue;
		ret = kc_json_escape(ps);
		if (ret)
			return ret;
	}
	if (ps->p == ps->end)
		return kc_json_fail(ps, -EBADMSG, "the text ends inside a string");
	n->len = ps->p++ - n->text;
	return 0;
}

static void kc_json_digits(struct kc_json_parser *ps)
{
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int kc_json_number(struct kc_json_parser *ps, struct kc_json *n)
{
	const char *digits;

	n->text = ps->p;
	if (*ps->p == '-')
		ps->p++;
	digits = ps->p;
	kc_json_digits(ps);
	if (ps->p == digits || (*digits == '0' && ps->p - digits > 1))
		return kc_json_fail(ps, -EBADMSG, "malformed number");
	if (ps->p < ps->end && *ps->p == '.') {
		digits = ++ps->p;
		kc_json_digits(ps);
		if (ps->p == digits)
			return kc_json_unexpected(ps, "a digit after '.'");
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		digits = ps->p;
		kc_json_digits(ps);
		if (ps->p == digits)
			return kc_json_unexpected(ps, "a digit of the exponent");
	}
	n->len = ps->p - n->text;
	return 0;
}

static int kc_json_word(struct kc_json_parser *ps, struct kc_json *n)
{
	static const struct {
		const char *word;
		enum kc_json_kind kind;
	} words[] = {
		{ "null", KC_JSON_NULL },
		{ "true", KC_JSON_TRUE },
		{ "false", KC_JSON_FALSE },
	};
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		len = strlen(words[i].word);
		if ((size_t)(ps->end - ps->p) >= len &&
		    !memcmp(ps->p, words[i].word, len)) {
			n->kind = words[i].kind;
			ps->p += len;
			return 0;
		}
	}
	return kc_json_unexpected(ps, "a value");
}

/* Appends @child to @parent's children; @tail is the last one so far */
static void kc_json_append(struct kc_json *parent, struct kc_json **tail,
			   struct kc_json *child)
{
	if (*tail)
		(*tail)->next = child;
	else
		parent->child = child;
	*tail = child;
	parent->count++;
}

/* After an element: true at the closing @close, false after a comma */
static int kc_json_more(struct kc_json_parser *ps, char close, bool *done)
{
	kc_json_skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		*done = true;
		return 0;
	}
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		*done = false;
		return 0;
	}
	return kc_json_unexpected(ps, close == ']' ? "',' or ']'" : "',' or '}'");
}

static int kc_json_array(struct kc_json_parser *ps, u32 depth,
			 struct kc_json *n)
{
	struct kc_json *tail = NULL, *elem;
	bool done = false;
	int ret;

	ps->p++;
	kc_json_skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	while (!done) {
		ret = kc_json_value(ps, depth + 1, &elem);
		if (ret)
			return ret;
		kc_json_append(n, &tail, elem);
		ret = kc_json_more(ps, ']', &done);
		if (ret)
			return ret;
	}
	return 0;
}

/* A key of an object, with its colon; refuses a key seen before */
static int kc_json_key(struct kc_json_parser *ps, const struct kc_json *obj,
		       const char **key, size_t *len)
{
	struct kc_json tmp = { };
	const struct kc_json *m;
	const char *at = ps->p;
	int ret;

	if (ps->p == ps->end || *ps->p != '"')
		return kc_json_unexpected(ps, "a key");
	ret = kc_json_string(ps, &tmp);
	if (ret)
		return ret;
	for (m = obj->child; m; m = m->next) {
		if (m->key_len == tmp.len && !memcmp(m->key, tmp.text, tmp.len)) {
			ps->p = at;
			return kc_json_fail(ps, -EINVAL, "key \"%.*s\" repeats",
					    (int)min_t(size_t, tmp.len, 64), tmp.text);
		}
	}
	kc_json_skip_ws(ps);
	if (ps->p == ps->end || *ps->p != ':')
		return kc_json_unexpected(ps, "':'");
	ps->p++;
	*key = tmp.text;
	*len = tmp.len;
	return 0;
}

static int kc_json_object(struct kc_json_parser *ps, u32 depth,
			  struct kc_json *n)
{
	struct kc_json *tail = NULL, *member;
	bool done = false;
	const char *key = NULL;
	size_t len = 0;
	int ret;

	ps->p++;
	kc_json_skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	while (!done) {
		kc_json_skip_ws(ps);
		ret = kc_json_key(ps, n, &key, &len);
		if (!ret)
			ret = kc_json_value(ps, depth + 1, &member);
		if (ret)
			return ret;
		member->key = key;
		member->key_len = len;
		kc_json_append(n, &tail, member);
		ret = kc_json_more(ps, '}', &done);
		if (ret)
			return ret;
	}
	return 0;
}

static int kc_json_value(struct kc_json_parser *ps, u32 depth,
			 struct kc_json **out)
{
	struct kc_json *n;
	char c;

	kc_json_skip_ws(ps);
	if (depth > KC_JSON_MAX_DEPTH)
		return kc_json_fail(ps, -EBADMSG, "nested deeper than %d",
				    KC_JSON_MAX_DEPTH);
	if (ps->p == ps->end)
		return kc_json_unexpected(ps, "a value");
	n = kc_json_new(ps, KC_JSON_NULL);
	if (!n)
		return ps->doc->err;
	*out = n;
	c = *ps->p;
	if (c == '{') {
		n->kind = KC_JSON_OBJECT;
		return kc_json_object(ps, depth, n);
	}
	if (c == '[') {
		n->kind = KC_JSON_ARRAY;
		return kc_json_array(ps, depth, n);
	}
	if (c == '"') {
		n->kind = KC_JSON_STRING;
		return kc_json_string(ps, n);
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		n->kind = KC_JSON_NUMBER;
		return kc_json_number(ps, n);
	}
	return kc_json_word(ps, n);
}

/**
 * kc_json_parse() - read a JSON text
 * @doc: receives the tree; free it with kc_json_free(), also on failure
 * @text: the text; must outlive @doc, which points into it
 * @len: its bytes
 *
 * Return: 0, -EBADMSG for a text that is not one JSON value, -EINVAL for
 * a key repeated in an object, -ENOMEM. @doc->msg, @doc->line and
 * @doc->col say what and where.
 */
int kc_json_parse(struct kc_json_doc *doc, const char *text, size_t len)
{
	struct kc_json_parser ps = {
		.doc = doc, .p = text, .end = text + len,
		.line = 1, .line_start = text,
	};
	int ret;

	memset(doc, 0, sizeof(*doc));
	ret = kc_json_value(&ps, 0, &doc->root);
	if (ret)
		return ret;
	kc_json_skip_ws(&ps);
	if (ps.p != ps.end)
		return kc_json_unexpected(&ps, "the end of the text");
	return 0;
}

/**
 * kc_json_free() - free what kc_json_parse() allocated
 * @doc: the document
 */
void kc_json_free(struct kc_json_doc *doc)
{
	struct kc_json_block *b, *next;

	for (b = doc->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	doc->blocks = NULL;
	doc->root = NULL;
}

/**
 * kc_json_kind_name() - a JSON type's name, for messages
 * @kind: the type
 *
 * Return: "a string" and so on.
 */
const char *kc_json_kind_name(enum kc_json_kind kind)
{
	static const char *const names[] = {
		[KC_JSON_NULL] = "null",
		[KC_JSON_FALSE] = "false",
		[KC_JSON_TRUE] = "true",
		[KC_JSON_NUMBER] = "a number",
		[KC_JSON_STRING] = "a string",
		[KC_JSON_ARRAY] = "an array",
		[KC_JSON_OBJECT] = "an object",
	};

	return (size_t)kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

/**
 * kc_json_key_is() - whether an object member has a key
 * @n: the member
 * @key: the key, as written without escapes
 *
 * Return: true if @n's key is @key.
 */
bool kc_json_key_is(const struct kc_json *n, const char *key)
{
	return n->key_len == strlen(key) && !memcmp(n->key, key, n->key_len);
}

/**
 * kc_json_member() - an object's member by its key
 * @obj: the object
 * @key: the key
 *
 * Return: the member, or NULL.
 */
const struct kc_json *kc_json_member(const struct kc_json *obj,
				     const char *key)
{
	const struct kc_json *m;

	for (m = obj->child; m; m = m->next)
		if (kc_json_key_is(m, key))
			return m;
	return NULL;
}

/**
 * kc_json_u64() - a number node as an unsigned integer
 * @n: a %KC_JSON_NUMBER node
 * @max: the largest value allowed
 * @v: receives the value
 *
 * Return: 0, -EINVAL for a number with a fraction or an exponent,
 * -ERANGE for a negative one or one above @max.
 */
int kc_json_u64(const struct kc_json *n, u64 max, u64 *v)
{
	u64 x = 0;
	size_t i;

	if (memchr(n->text, '.', n->len) || memchr(n->text, 'e', n->len) ||
	    memchr(n->text, 'E', n->len))
		return -EINVAL;
	if (n->text[0] == '-')
		return -ERANGE;
	for (i = 0; i < n->len; i++) {
		if (x > (U64_MAX - (n->text[i] - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (n->text[i] - '0');
	}
	if (x > max)
		return -ERANGE;
	*v = x;
	return 0;
}

static int kc_json_hex4(const char *p)
{
	int v = 0, i;

	for (i = 0; i < 4; i++)
		v = v * 16 + (p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
	return v;
}

/**
 * kc_json_bytes() - a string node's bytes, its escapes decoded
 * @n: a %KC_JSON_STRING node (kc_json_parse() checked its escapes)
 * @out: receives the bytes
 * @max: room at @out
 * @len: receives their count
 *
 * A \u escape stands for one byte, as decode writes the bytes of the
 * kernel's release string that are not printable ASCII.
 *
 * Return: 0, -ENOSPC if the bytes do not fit in @max, -ERANGE for a \u
 * escape above \u00ff.
 */
int kc_json_bytes(const struct kc_json *n, u8 *out, size_t max, size_t *len)
{
	static const char plain[] = "\"\\/bfnrt", value[] = "\"\\/\b\f\n\r\t";
	const char *p = n->text, *end = n->text + n->len;
	size_t done = 0;
	int c;

	while (p < end) {
		if (*p != '\\') {
			c = (u8)*p++;
		} else if (p[1] == 'u') {
			c = kc_json_hex4(p + 2);
			if (c > 0xff)
				return -ERANGE;
			p += 6;
		} else {
			c = value[strchr(plain, p[1]) - plain];
			p += 2;
		}
		if (done == max)
			return -ENOSPC;
		out[done++] = c;
	}
	*len = done;
	return 0;
}
