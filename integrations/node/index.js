// appleid-mock for Node tests: start a local appleid.apple.com (or attach to one), sign in, mint
// client secrets, receive verified notifications. No dependencies beyond Node's standard library.
export { AppleIDMock, AppleIDMockError, BUILT_IN_KEY, BUILT_IN_KEY_ID, BUILT_IN_TEAM, MAX_SECRET_LIFETIME } from './src/mock.js';
export { NotificationReceiver } from './src/notifications.js';
export { attach, findBinary, start, StartedMock, wireReceiver } from './src/process.js';
