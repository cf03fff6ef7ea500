import { expect } from 'vitest';
import { type DecodeFailure, Sip2DecodeError, Sip2EncodeError } from '../../../src/sip2/errors.js';

/** Runs fn, asserts it throws a Sip2DecodeError with this reason, and returns the error. */
export function expectDecodeError(fn: () => unknown, reason: DecodeFailure): Sip2DecodeError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a Sip2DecodeError').toBeInstanceOf(Sip2DecodeError);
  const error = thrown as Sip2DecodeError;
  expect(error.reason).toBe(reason);
  expect(error.code).toBe('SIP2_DECODE');
  return error;
}

/** Runs fn, asserts it throws a Sip2EncodeError naming this field, and returns the error. */
export function expectEncodeError(fn: () => unknown, field: string): Sip2EncodeError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a Sip2EncodeError').toBeInstanceOf(Sip2EncodeError);
  const error = thrown as Sip2EncodeError;
  expect(error.field).toBe(field);
  expect(error.code).toBe('SIP2_ENCODE');
  return error;
}
