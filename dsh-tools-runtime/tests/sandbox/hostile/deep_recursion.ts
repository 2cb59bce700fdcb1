// expect: stack-overflow: stack limit reached (262144 bytes)
// Plain recursion stops at the JS stack limit, far below the host thread's stack.
function down(n: number): number {
  return down(n + 1) + 1;
}
return down(0);
