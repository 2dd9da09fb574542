import { shapeBViolation } from '../../lib/token/claims';
import { NOW, shapeB } from '../fixtures/issuer';

const withCreatedAt = (createdAt: string) => shapeB(NOW, { metadata: { createdAt, authorizer: 'x' } });

describe('the Shape B calendar check of metadata.createdAt', () => {
  it.each([
    '2024-02-29T00:00:00Z',
    '2000-02-29T23:59:59.999Z',
    '2023-12-31T00:00:00Z',
    '2023-04-30T00:00:00Z',
    '0000-02-29T00:00:00Z',
  ])('accepts %s, a day that exists', (createdAt) => expect(shapeBViolation(withCreatedAt(createdAt))).toBeUndefined());

  it.each([
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-06-31T00:00:00Z',
    '2024-11-31T00:00:00.5Z',
  ])('refuses %s, a day that does not exist', (createdAt) =>
    expect(shapeBViolation(withCreatedAt(createdAt))).toBe('metadata.createdAt'),
  );
});
