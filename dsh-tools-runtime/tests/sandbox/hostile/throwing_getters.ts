// expect: invalid-output: program completion must be lossless JSON: conversion trap
// The completion is read by the host after the program ended: a getter that throws then (and
// one whose error's toString throws too) must become a typed failure, not a host panic.
return {
  fine: [1, 2, 3],
  get bad(): never {
    throw new Error('conversion trap');
  },
};
