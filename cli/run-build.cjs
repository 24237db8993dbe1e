// Loads the build's CommonJS bundle (scripts/build.js) through node:vm with a V8 code cache, so
// that a command does not parse and compile again what it compiled the last time it ran.
//
// One cache per command module (the command table's; build.json maps each command name to its
// module's), per bundle (bin.cjs puts the bundle's hash in the name), Node version, architecture
// and Node options, in dist/cli/code-cache/, made at the end of a successful run (exit status 0)
// that had none (or whose cache V8 refused: another V8, other V8 flags), so it holds every function
// that command compiled on its way to a result. A build removes every cache. A file starts with the CRC-32 of the rest (4 bytes,
// little-endian): V8 checks versions, flags and the source's length but no checksum, and would
// crash on damaged data; anything that does not match is ignored. The CRC is node:zlib's, not a
// hash of node:crypto, which would cost every command some 3 ms of CPU to load, and taken from
// Node's zlib binding itself where it can be (see loadCrc32); a Node without zlib.crc32 (before
// 20.15) runs commands without a cache. Where dist/ is not writable (an install
// owned by another user) commands run without a cache.
//
// CommonJS, as cli/bin.cjs that requires it: an ES module entry costs Node its ESM loader at each start.
'use strict';

const { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
// Node's Module class, whose createRequire this is: what `require('node:module')` exports, without
// loading that module, which loads Node's ES module loader and source maps.
const { createRequire } = module.constructor;
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');
const crc32 = loadCrc32();

const DIGEST_BYTES = 4;

/**
 * node:zlib's CRC-32 (`crc32(data, value)`), without loading node:zlib where that can be avoided:
 * its module (streams and all) takes some 2.7 ms of a command's start on a 2-core machine, and
 * only this function of it is used. It is the function of Node's zlib binding that zlib.crc32
 * calls after checking its arguments, reached through process.binding, which is deprecated
 * (DEP0111) but warns only with pending deprecations on: then, or where the binding is refused
 * (the permission model) or lacks the function, node:zlib's own is used. Undefined when neither
 * has it (Node before 20.15).
 */
function loadCrc32() {
  const options = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  if (!options.includes('--pending-deprecation') && !process.env.NODE_PENDING_DEPRECATION) {
    try {
      const binding = process.binding('zlib');
      if (typeof binding.crc32 === 'function') return (data, value = 0) => binding.crc32(data, value);
    } catch {
      // Refused: node:zlib below.
    }
  }
  return require('node:zlib').crc32;
}

/**
 * Evaluates `bundle` (a CommonJS module inside the wrapper of Node's loader, scripts/build.js) and
 * returns its exports, or undefined when there is no such file. `cacheName` names its code cache
 * (undefined: none is read or written); it must change with the bundle's content. The cache is
 * written when the process exits with status 0, if it was missing or refused; failing to read or
 * write it never fails the command.
 */
function loadBundle(bundle, cacheName) {
  let source;
  try {
    // ASCII (the build checks it) read as latin1: one byte a character, no UTF-8 decoding; for a file
    // over ~1 MB (main.cjs, not sessions.cjs) Node hands V8 a string that stays outside its heap.
    source = readFileSync(bundle, 'latin1');
  } catch (error) {
    if (error?.code === 'ENOENT') return undefined;
    throw error;
  }
  const cacheFile = cacheName === undefined || crc32 === undefined ? undefined : cachePath(bundle, cacheName);
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new Script(source, { filename: bundle, ...(cachedData === undefined ? {} : { cachedData }) });
  // Made by a run that succeeded only: a failing one (a config error, a refused workspace) stops early
  // and compiled little of the command, and a cache holding only that would be kept for every later run.
  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once('exit', (code) => {
      if (code === 0) writeCache(cacheFile, script);
    });
  }
  const bundleModule = { exports: {} };
  script.runInThisContext()(bundleModule.exports, createRequire(bundle), bundleModule, bundle, dirname(bundle));
  return bundleModule.exports;
}

/**
 * The cache file of `cacheName` for this Node version and architecture, and for this process's
 * Node options when it has any (V8 refuses a cache made under other flags: runs with and without
 * e.g. --cpu-prof keep a cache each instead of replacing each other's).
 */
function cachePath(bundle, cacheName) {
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0');
  const tag = options === '' ? '' : `-${crc32(options).toString(16).padStart(8, '0')}`;
  return join(cacheDirectory(bundle), `${cacheName}-${process.version}-${process.arch}${tag}.bin`);
}

// The cached data when the file exists and its digest matches, else undefined.
function readCache(file) {
  let data;
  try {
    data = readFileSync(file);
  } catch {
    return undefined;
  }
  if (data.length <= DIGEST_BYTES) return undefined;
  const payload = data.subarray(DIGEST_BYTES);
  return crc32(payload) === data.readUInt32LE(0) ? payload : undefined;
}

// Writes the script's code cache (digest first) through a temporary file and a rename, so that a
// concurrent reader sees the old file or the new one, never a part.
function writeCache(file, script) {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const payload = script.createCachedData();
    const digest = Buffer.alloc(DIGEST_BYTES);
    digest.writeUInt32LE(crc32(payload));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temporary, Buffer.concat([digest, payload]));
    renameSync(temporary, file);
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing was written (the directory could not be made): nothing to remove.
    }
  }
}

/** The directory of a bundle's code caches, where commands keep other start-up caches too (core/config/value-cache.ts). */
function cacheDirectory(bundle) {
  return join(dirname(bundle), 'code-cache');
}

exports.loadBundle = loadBundle;
exports.cacheDirectory = cacheDirectory;
exports.cachePath = cachePath;
