// expect: invalid-output: program completion must be lossless JSON: conversion trap
// The completion is read by the host after the program ended: a getter that throws then must
// become a typed failure carrying the thrown message, not a host panic or a partial value.
return {
  fine: [1, 2, 3],
  get bad(): never {
    throw new Error('conversion trap');
  },
};
