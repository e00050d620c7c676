"""Workload for run-memcached.sh: CLIENTS threads, each on its own connection,
do OPS set/get/incr/delete round trips on keys of its own and check every
answer; then one connection reads "stats".  Prints key=value lines:
mc_ops= mc_wrong= mc_errors= curr_connections= threads=.  Exit 0 if no answer
was wrong and no connection failed."""
import socket, sys, threading

host, port, ops, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
lock = threading.Lock()
totals = {"ops": 0, "wrong": 0, "errors": 0}


class Conn:
    def __init__(self):
        self.s = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l

    def cmd(self, data):
        self.s.sendall(data)
        return self.line()


def worker(n):
    ops_done = wrong = 0
    try:
        c = Conn()
        for i in range(ops):
            key = b"k%d_%d" % (n, i % 64)
            val = b"value-%d-%d-" % (n, i) + b"x" * (i % 200)
            if c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val)) != b"STORED":
                wrong += 1
            if c.cmd(b"get %s\r\n" % key) != b"VALUE %s 0 %d" % (key, len(val)):
                wrong += 1
            else:
                if c.line() != val or c.line() != b"END":
                    wrong += 1
            ctr = b"ctr%d" % n
            if i == 0:
                c.cmd(b"set %s 0 0 1\r\n0\r\n" % ctr)
            if c.cmd(b"incr %s 1\r\n" % ctr) != b"%d" % (i + 1):
                wrong += 1
            if i % 16 == 15 and c.cmd(b"delete %s\r\n" % key) != b"DELETED":
                wrong += 1
            ops_done += 1
        c.s.close()
        err = 0
    except Exception as e:  # a failed connection counts once
        print("client %d: %s" % (n, e), file=sys.stderr)
        err = 1
    with lock:
        totals["ops"] += ops_done
        totals["wrong"] += wrong
        totals["errors"] += err


threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
stats = {}
try:
    c = Conn()
    c.s.sendall(b"stats\r\n")
    while True:
        l = c.line().decode()
        if l == "END":
            break
        parts = l.split()
        if len(parts) == 3:
            stats[parts[1]] = parts[2]
    c.s.close()
except Exception as e:
    print("stats: %s" % e, file=sys.stderr)
    totals["errors"] += 1
print("mc_ops=%d" % totals["ops"])
print("mc_wrong=%d" % totals["wrong"])
print("mc_errors=%d" % totals["errors"])
print("threads=%s" % stats.get("threads", "?"))
sys.exit(0 if totals["wrong"] == 0 and totals["errors"] == 0 and totals["ops"] == ops * clients else 1)
