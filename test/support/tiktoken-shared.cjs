'use strict';
// What `tiktoken` is in jest (jest.config.ts maps it here): the worker's one copy that
// test/support/jest-environment.cjs keeps, or the package itself outside that environment.
const shared = globalThis.__compactorTiktoken ?? require('../../node_modules/tiktoken/tiktoken.cjs');
exports.get_encoding = shared.get_encoding;
exports.encoding_for_model = shared.encoding_for_model;
exports.get_encoding_name_for_model = shared.get_encoding_name_for_model;
exports.Tiktoken = shared.Tiktoken;
