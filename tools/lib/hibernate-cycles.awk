# tools/bench --vm: the lines "WRITER boot1-start=0.00 hibernating=S
# boot1-end=S boot2-start=S resumed=S boot2-end=S" (WRITER kernel or
# fridge, seconds by the host's clock) into one FIGURE line: the medians
# of hibernate to resumed, and its two halves (to power-off; power-on to
# running again), fridge's over the kernel's (lower is better).
function median(a, n,    i, j, t) {
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
  delete v
  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  if (!("hibernating" in v) || !("resumed" in v) || !("boot1-end" in v) || !("boot2-start" in v)) {
    printf "hibernate-cycles: incomplete times for %s: %s\n", $1, $0 > "/dev/stderr"; bad = 1; next
  }
  w = $1; n[w]++
  whole[w, n[w]] = v["resumed"] - v["hibernating"]
  down[w, n[w]] = v["boot1-end"] - v["hibernating"]
  up[w, n[w]] = v["resumed"] - v["boot2-start"]
}
function med(arr, w,    i, a) { for (i = 1; i <= n[w]; i++) a[i] = arr[w, i]; return median(a, n[w]) }
END {
  if (bad || !n["kernel"] || !n["fridge"]) { print "hibernate-cycles: no figure (see above)" > "/dev/stderr"; exit 1 }
  fk = med(whole, "fridge"); kk = med(whole, "kernel")
  r = fk / kk
  printf "FIGURE hibernate to resumed, median of %d: fridge %.2f s, kernel %.2f s (to power-off: fridge %.2f s, kernel %.2f s; power-on to running again: fridge %.2f s, kernel %.2f s), ratio %.2f (fridge's time over the kernel's; goal <= 1.00: %s)\n", \
    n["fridge"], fk, kk, med(down, "fridge"), med(down, "kernel"), med(up, "fridge"), med(up, "kernel"), r, (r <= 1.0 ? "met" : "NOT met")
}
