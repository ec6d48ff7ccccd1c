import type { Connection, Model, Schema } from 'mongoose';

/**
 * The connection's model `name`, registered from `schema` the first time it is asked for.
 * Repositories are built more than once per connection (tests, tools); a second
 * `connection.model(name, schema)` would throw mongoose's OverwriteModelError.
 */
export function modelOf<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}
