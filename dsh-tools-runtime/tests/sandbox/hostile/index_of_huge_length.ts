// expect: timeout
// quickjs-ng#1672: a 2^32 - 1 length makes indexOf walk four billion indices.
return Array.prototype.indexOf.call({ length: 4294967295 }, 99);
