/**
 * Every e2e suite: record each response the API serves in this process (the spawned API
 * processes record through NODE_OPTIONS, see global-setup.js) and, after each test, validate
 * every response recorded during it against openapi.json. A mismatch fails that test.
 */
import { checkOrThrow, startRecording } from './contract-check';
import { install } from './response-recorder';

const dir = process.env.RESPONSE_RECORD_DIR;
install(dir);
startRecording(dir);

afterEach(() => checkOrThrow());
afterAll(() => checkOrThrow());
