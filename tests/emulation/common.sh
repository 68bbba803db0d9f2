# Shared by the emulation scripts (sourced): the demo fleet's secret and the wait for a server.

# The emulation fleets' HKDF secret; the scripts' Python writes it into the server configs.
export FLEET_SECRET=$(printf '5a%.0s' $(seq 32))

# wait_for_port PID LOG: until the server PID has written ./port (atomically, once it listens);
# fails — printing LOG — if it exits first or does not listen within 60 s.
wait_for_port() {
  for _ in $(seq 600); do
    [ -s port ] && return 0
    kill -0 "$1" 2>/dev/null || { echo "the server exited before listening"; cat "$2"; exit 1; }
    sleep 0.1  # polling the file, bounded above
  done
  echo "the server did not listen within 60 s"; cat "$2"; exit 1
}
