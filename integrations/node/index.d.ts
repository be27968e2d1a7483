// Types of appleid-mock for Node (index.js). Answers of the control API are the mock's JSON
// (docs/control-api.md); the fields named here are the ones the kit itself relies on.

export type JSONValue = null | boolean | number | string | JSONValue[] | { [name: string]: JSONValue };
export type JSONObject = { [name: string]: JSONValue };

export declare const BUILT_IN_KEY: URL;
export declare const BUILT_IN_TEAM: 'MOCKTEAM01';
export declare const BUILT_IN_KEY_ID: 'MOCKKEY001';
/** Apple's limit on a client_secret's lifetime (exp - iat), six months in seconds. */
export declare const MAX_SECRET_LIFETIME: 15777000;

/** The mock refused a request, or would not start; the message is the mock's reason. */
export declare class AppleIDMockError extends Error {
  status?: number;
  body?: JSONValue | string;
  code?: string;
}

export interface ClientSecretOptions {
  teamID?: string;
  keyID?: string;
  /** A .p8 path or its PEM text; default the built-in test key. */
  key?: string;
  /** Seconds, 1…MAX_SECRET_LIFETIME; default 3600. */
  lifetime?: number;
  /** Seconds since the epoch; default now. */
  issuedAt?: number;
}

export interface NativeCredential extends JSONObject {
  user: string;
  identityToken: string;
  authorizationCode: string;
}

export interface WebDelivery extends JSONObject {}

export interface Notification {
  type: string;
  sub?: string;
  events: JSONObject;
  claims: JSONObject;
  kid: string;
  token: string;
}

export declare class NotificationReceiver {
  url: string | null;
  listen(host?: string): Promise<NotificationReceiver>;
  attach(mock: AppleIDMock): void;
  close(): Promise<void>;
  readonly received: number;
  next(options?: { timeout?: number }): Promise<Notification>;
}

export interface Fault extends JSONObject {}

export declare class Faults {
  add(fault: JSONObject): Promise<JSONObject>;
  incident(name: string, minutes?: number): Promise<JSONObject>;
  list(): Promise<Fault[]>;
  clear(incident?: string): Promise<number>;
}

export interface MockOptions {
  /** PEM text or a path: the CA of an https mock. */
  ca?: string;
  controlToken?: string;
  /** The scenario the mock serves: the defaults of clientSecret and authorizeWeb. */
  scenario?: JSONObject;
  /** Seconds to wait for an answer; default 30. */
  timeout?: number;
}

export declare class AppleIDMock {
  constructor(url: string, options?: MockOptions);
  readonly url: string;
  readonly scenario: JSONObject | null;
  readonly faults: Faults;
  clientSecret(clientID?: string, options?: ClientSecretOptions): string;
  signIn(user: string, clientID: string, fields?: JSONObject): Promise<NativeCredential>;
  authorizeWeb(user: string, options?: { clientID?: string; redirectURI?: string; [parameter: string]: JSONValue | undefined }): Promise<WebDelivery>;
  token(user?: string, options?: { clientID?: string; defect?: string; nonce?: string; claims?: JSONObject; [field: string]: JSONValue | undefined }): Promise<string | JSONObject>;
  advanceClock(seconds: number): Promise<JSONObject>;
  rotateKeys(): Promise<JSONObject>;
  fireEvent(type: string, user: string, clientID: string): Promise<JSONObject>;
  changePassword(user: string): Promise<JSONObject>;
  requests(filters?: { [name: string]: string | number | boolean | undefined }): Promise<JSONObject[]>;
  reset(): Promise<JSONObject>;
  health(): Promise<{ active_kid: string; issuer: string; status: string }>;
  journalMark(): Promise<number>;
  refusals(after?: number): Promise<string[]>;
  logs(): string[];
  call(method: string, path: string, body?: JSONValue, query?: { [name: string]: string }): Promise<any>;
  waitUntilHealthy(timeout?: number, alive?: () => void): Promise<JSONObject>;
}

export interface StartOptions extends MockOptions {
  /** The appleid-mock binary; default APPLEID_MOCK_BIN, then PATH. */
  binary?: string;
  /** An object, a path, or undefined for the built-in scenario. */
  scenario?: JSONObject | string;
  serveArgs?: string[];
  port?: number;
  /** A receiver wired into every team without a notification_url; default true. */
  notifications?: boolean;
}

export declare class StartedMock extends AppleIDMock {
  readonly pid: number;
  readonly notifications: NotificationReceiver | undefined;
  /** SIGTERM, then the exit status; SIGKILL after `timeout` seconds (default 20). */
  stop(options?: { timeout?: number }): Promise<number>;
}

export declare function start(options?: StartOptions): Promise<StartedMock>;
export declare function attach(url: string, options?: MockOptions & { scenario?: JSONObject | string }): Promise<AppleIDMock>;
export declare function findBinary(explicit?: string): string;
export declare function wireReceiver(scenario: JSONObject, url: string): JSONObject;
