#!/bin/sh
# Blocks write/edit calls whose path is a .env file or inside .git/, and bash commands that
# mention them; with --protect-reads, read calls too. Input on stdin:
# {"event":"tool_call","toolCallId":…,"toolName":…,"input":{…},"flags":{"protect-reads":…}}.
event=$(cat)

tool=$(printf '%s' "$event" | sed -n 's/.*"toolName" *: *"\([^"]*\)".*/\1/p')
if [ "$tool" = read ] && printf '%s' "$event" | grep -Eq '"protect-reads" *: *true'; then
  tool=read-protected
fi
case "$tool" in
  write|edit|read-protected)
    tool=${tool%-protected}
    target=$(printf '%s' "$event" | sed -n 's/.*"path" *: *"\([^"]*\)".*/\1/p') ;;
  bash)
    target=$(printf '%s' "$event" | sed -n 's/.*"command" *: *"\(\([^"\\]\|\\.\)*\)".*/\1/p') ;;
  *)
    exit 0 ;;
esac

# A path component .env or .env.<something>, or a .git directory component.
if printf '%s\n' "$target" | grep -Eq '(^|[/[:space:]"'"'"'=])\.env(\.[A-Za-z0-9_-]+)?($|[/[:space:]"'"'"';|&])|(^|[/[:space:]"'"'"'=])\.git($|/)'; then
  echo "Blocked by protected-paths: $tool may not touch .env files or .git/ ($target)" >&2
  exit 2
fi
exit 0
