# Helpers shared by ckgate's default rules. Paths are '/'-separated
# locations ("s3://bucket/team/q1/offsets/3" or "team/q1/offsets/3");
# a root never ends with '/'.
package ckgate.lib

import data.ckgate.catalog

# violation builds a gateway denial: stable id, name and severity from the
# catalogue (a user rule with an id of its own keeps that id), and a message.
violation(id, msg) := {
	"id": id,
	"name": object.get(catalog.rules, [id, "name"], id),
	"severity": object.get(catalog.rules, [id, "severity"], "deny"),
	"msg": msg,
}

# entry is element d of the set kind ("deny" or "warn") of the package
# ckgate.gateway.rules.<pkg>, as a violation {id, name, severity, msg}:
# ckgate's own (built by violation) as it is; a conftest-style message (a
# string, or an object with "msg" and "code" or "id", other fields aside)
# named by its code, or by the package. It is defined, and cannot fail, for
# every value: anything else is a violation of the package showing it.
entry(pkg, kind, d) := {
	"id": text(d, "id", text(d, "code", pkg)),
	"name": text(d, "name", pkg),
	"severity": entry_severity(kind, d),
	"msg": text(d, "msg", shown(d)),
} if is_object(d)

entry(pkg, kind, d) := {"id": pkg, "name": pkg, "severity": kind, "msg": d} if {
	is_string(d)
	d != ""
}

entry(pkg, kind, d) := {"id": pkg, "name": pkg, "severity": kind, "msg": shown(d)} if {
	not is_object(d)
	not nonempty_string(d)
}

# shown is a value that is no message, shown as one.
shown(d) := "(an empty message)" if d == ""

else := sprintf("%v", [d])

# text is the non-empty string d[k], or fallback.
text(d, k, fallback) := d[k] if nonempty_string(d[k])

else := fallback

nonempty_string(s) if {
	is_string(s)
	s != ""
}

# entry_severity: an object's own "deny" or "warn" wins over its set's.
entry_severity(kind, d) := d.severity if d.severity in {"deny", "warn"}

else := kind

# finding builds an audit finding about resource.
finding(id, resource, msg) := {
	"id": id,
	"name": object.get(catalog.rules, [id, "name"], id),
	"severity": object.get(catalog.rules, [id, "severity"], "deny"),
	"resource": resource,
	"msg": msg,
}

# dir returns root with one trailing '/', or "" for the empty root.
dir(root) := "" if root == ""

else := concat("", [trim_suffix(root, "/"), "/"])

# inside is true when path lies strictly under root.
inside(path, root) if startswith(path, dir(root))

# scope_dir is the input's scope with one trailing '/' ("" for no scope),
# spelled out rather than through dir: it is on every decision's path.
default scope_dir := ""

scope_dir := concat("", [trim_suffix(input.scope, "/"), "/"]) if input.scope != ""

# root_dir is kept for user rules written against the older input.
default root_dir := ""

root_dir := concat("", [trim_suffix(input.root, "/"), "/"]) if input.root != ""

# rel is path relative to root; undefined when path is not under root.
rel(path, root) := substring(path, count(dir(root)), -1) if inside(path, root)

# relation names how root a stands to root b: equal, inside or above.
relation(a, b) := "equal to" if trim_suffix(a, "/") == trim_suffix(b, "/")

relation(a, b) := "inside" if {
	trim_suffix(a, "/") != trim_suffix(b, "/")
	inside(a, b)
}

relation(a, b) := "above" if {
	trim_suffix(a, "/") != trim_suffix(b, "/")
	inside(b, a)
}

log_dirs := {"offsets", "commits"}

# log_entry(rel) is true for a committed-log key relative to a checkpoint
# root: offsets/N or commits/N.
log_entry(r) if regex.match(`^(offsets|commits)/[0-9]+$`, r)

# sink_log_entry(path) is true for a file sink's manifest, wherever the sink
# directory is: .../_spark_metadata/N or .../_spark_metadata/N.compact, and
# for an entry of its owner log, .../_ckgate/sink-owner/N.
sink_log_entry(path) if regex.match(`(^|/)(?:_spark_metadata/[0-9]+(\.compact)?|_ckgate/sink-owner/[0-9]+)$`, path)

# is_log_key is true when the input's location is a log entry of any
# checkpoint root above it (input.roots, not only the nearest one):
# offsets/N, commits/N, sources/S/N, the root's metadata; or a file sink's
# _spark_metadata/N wherever it is. Each rule is led by a startswith on a
# prefix that is constant once the roots are known: specialised for them,
# the rule index passes over every other key without evaluating the rule.
is_log_key if {
	some r in input.roots
	d := dir(r)
	startswith(input.location, d)
	root_log_entry(substring(input.location, count(d), -1))
}

is_log_key if sink_log_entry(input.location)

# purgeable is true when the log entry a delete touches is one that the
# query's own purge removes and no restart needs (input.purge, see
# policy.PurgeFacts): an offsets/N or commits/N below the restart floor
# (min(latest offsets - 1, latest commit): a restart reads offsets/L,
# offsets/L-1 and the latest commit), or a sources/S/N or
# _spark_metadata/N (.compact or not) below the newest N.compact of its
# log, which covers it. metadata and a sink's owner records never are.
purgeable if {
	input.purge.log in {"offsets", "commits"}
	regex.match(`/(?:offsets|commits)/[0-9]+$`, input.location)
	input.purge.batch < input.purge.restart_floor
}

purgeable if {
	input.purge.log in {"sources", "spark_metadata"}
	regex.match(`/(?:sources/[^/]+|_spark_metadata)/[0-9]+(?:\.compact)?$`, input.location)
	input.purge.batch < input.purge.latest_compact
}

# root_log_entry(rel) is true for a log entry's name relative to its root.
root_log_entry(r) if regex.match(`^(?:(?:offsets|commits)/[0-9]+|sources/[^/]+/[0-9]+(?:\.compact)?|metadata)$`, r)

# live_file_of(r) is true when the location is a log entry or a state file
# of root r.
live_file_of(r) if {
	d := dir(r)
	startswith(input.location, d)
	rel := substring(input.location, count(d), -1)
	root_log_entry(rel)
}

live_file_of(r) if startswith(input.location, concat("", [dir(r), "state/"]))

# is_state_key is true when the location is under a root's state/.
is_state_key if {
	some r in input.roots
	startswith(input.location, concat("", [dir(r), "state/"]))
}

# nested_root_metadata is true for a put of a `metadata` file strictly
# inside a checkpoint root that is neither that root's own metadata nor an
# operator's (state/<op>/_metadata/metadata): it would start a root inside
# a root.
nested_root_metadata if {
	endswith(input.location, "/metadata")
	some r in checkpoint_roots
	d := dir(r)
	startswith(input.location, d)
	rel := substring(input.location, count(d), -1)
	rel != "metadata"
	not regex.match(`^state/[^/]+/_metadata/metadata$`, rel)
}

# known_queries are the query roots ckgate knows: data.ckgate.queries (from
# --data) and input.known_queries (from the caller), each {query_id, root}.
known_queries contains q if some q in data.ckgate.queries

known_queries contains q if some q in input.known_queries

# overwrite is true for a put that may replace an existing object: one with
# condition if-match, or none unless the caller established that the key
# is absent (input.exists == false). A create-only put never replaces.
overwrite if input.cond == "if-match"

overwrite if {
	input.cond == "none"
	not input.exists == false
}

# checkpoint_roots are the roots above the input's location and every
# known query's root.
checkpoint_roots contains r if some r in input.roots

checkpoint_roots contains q.root if some q in known_queries

# principal_name names the principal for messages.
principal_name := sprintf("%s %q", [principal_kind, principal_id])

# principal_kind is the input principal's kind, "unknown" when it has none.
default principal_kind := "unknown"

principal_kind := input.principal.kind

default principal_id := ""

principal_id := input.principal.id
