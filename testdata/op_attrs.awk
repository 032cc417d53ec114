# op_attrs.awk: one line per op of the given types in a program's protobuf
# text form (pdtrans --text, or pdtrans dump):
#   TYPE OUTSLOT=ARG... ATTR=VALUE...
# leaving out the framework attrs op_role, op_role_var, op_namescope and
# op_callstack (op_device stays: an optimizer may set it), so a
# golden case can show the values an optimizer writes.
#   awk -v types="rmsprop fill_constant" -f op_attrs.awk main.pbtxt
BEGIN { n = split(types, t, " "); for (i = 1; i <= n; i++) want[t[i]] = 1 }
function unq(s) { gsub(/"/, "", s); return s }
/^  ops \{$/ { inop = 1; type = ""; outs = ""; attrs = ""; next }
inop && /^  \}$/ { if (type in want) print type outs attrs; inop = 0; next }
inop && /^    outputs \{$/ { inout = 1; next }
inout && /^      parameter:/ { slot = unq($2) }
inout && /^      arguments:/ { outs = outs " " slot "=" unq($2) }
inout && /^    \}$/ { inout = 0; next }
inop && /^    type:/ { type = unq($2) }
inop && /^    attrs \{$/ { inattr = 1; name = ""; val = ""; next }
inattr && /^      name:/ { name = unq($2) }
inattr && /^      [a-z_]+: / && !/^      (name|type):/ {
    v = $0
    sub(/^ *[a-z_]+: /, "", v)
    val = val (val == "" ? "" : ",") v
}
inattr && /^    \}$/ { inattr = 0; if (name !~ /^op_(role|role_var|namescope|callstack)$/) attrs = attrs " " name "=" val; next }
