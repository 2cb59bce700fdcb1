// expect: output-limit: outer output exceeded 65536 bytes
// limits: output=65536
for (;;) console.log('flood '.repeat(100));
