# Scenario 12: the package's autopkgtests (debian/tests, as its control
# file lists them) pass against fridge as installed in the guest.
# system-timeout: 180
dir=/usr/lib/fridge-system-test/autopkgtest
tests=$(sed -n 's/^Tests: *//p' "$dir/control")
[ -n "$tests" ] || fail "debian/tests/control lists no test"
for t in $tests; do
  echo "=== autopkgtest $t"
  sh "$dir/$t" || fail "autopkgtest $t failed"
done
echo "autopkgtests passed:" $tests
pass
