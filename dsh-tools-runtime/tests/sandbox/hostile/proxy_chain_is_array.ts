// expect: stack-overflow: stack limit reached
// limits: memory=67108864
// CVE-2023-31922: 131,072 nested proxies; Array.isArray recursed through them in C.
let p: object = {};
for (let i = 0; i < 131072; i++) p = new Proxy(p, {});
return Array.isArray(p);
